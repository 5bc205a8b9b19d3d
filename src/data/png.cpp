#include "data/png.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

namespace trainbench::data {
namespace {

struct Reader {
  const uint8_t* data;
  size_t size;
  size_t at;
  char message[256];
};

void read_bytes(png_structp png, png_bytep out, png_size_t n) {
  auto* r = static_cast<Reader*>(png_get_io_ptr(png));
  if (r->size - r->at < n) png_error(png, "truncated file");
  std::memcpy(out, r->data + r->at, n);
  r->at += n;
}

// libpng reports through these; an error must not return (it longjmps back to decode_png).
void on_error(png_structp png, png_const_charp msg) {
  auto* r = static_cast<Reader*>(png_get_error_ptr(png));
  std::snprintf(r->message, sizeof(r->message), "%s", msg);
  png_longjmp(png, 1);
}
void on_warning(png_structp, png_const_charp) {}

}  // namespace

bool is_png(const uint8_t* data, size_t size) { return size >= 8 && png_sig_cmp(data, 0, 8) == 0; }

bool png_size(const uint8_t* data, size_t size, int& width, int& height) {
  // Signature (8), then the IHDR chunk: length (4), "IHDR", width (4), height (4), big-endian.
  if (!is_png(data, size) || size < 24 || std::memcmp(data + 12, "IHDR", 4) != 0) return false;
  auto be32 = [&](size_t at) {
    return (uint32_t{data[at]} << 24) | (uint32_t{data[at + 1]} << 16) | (uint32_t{data[at + 2]} << 8) | data[at + 3];
  };
  const uint32_t w = be32(16), h = be32(20);
  if (w == 0 || h == 0 || w > 0x7fffffffu || h > 0x7fffffffu) return false;  // PNG's own rule: 1 to 2^31-1
  width = static_cast<int>(w);
  height = static_cast<int>(h);
  return true;
}

bool decode_png(const uint8_t* data, size_t size, RgbImage& out, std::string& error) {
  if (!is_png(data, size)) {
    error = "not a PNG";
    return false;
  }
  Reader reader{data, size, 0, {0}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader, on_error, on_warning);
  if (png == nullptr) {
    error = "libpng: out of memory";
    return false;
  }
  png_infop info = png_create_info_struct(png);
  // Rows are pointers into out.pixels, made before the jump point: nothing with a destructor lives
  // between setjmp and a longjmp back to it.
  std::vector<png_bytep> rows;
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    error = reader.message[0] != '\0' ? std::string("PNG: ") + reader.message : "libpng: out of memory";
    png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr);
    return false;
  }
  png_set_read_fn(png, &reader, read_bytes);
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  const int color = png_get_color_type(png, info);
  if (png_get_bit_depth(png, info) == 16) png_set_strip_16(png);  // the high byte, as Pillow
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) {
    png_set_expand_gray_1_2_4_to_8(png);
    png_set_gray_to_rgb(png);
  }
  // Alpha, and the alpha channel that expanding a palette (or gray) with a tRNS chunk adds, is dropped.
  if ((color & PNG_COLOR_MASK_ALPHA) != 0 || png_get_valid(png, info, PNG_INFO_tRNS) != 0) png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != static_cast<size_t>(width) * 3)
    png_error(png, "unexpected row size after conversion");
  out.width = static_cast<int>(width);
  out.height = static_cast<int>(height);
  out.pixels.resize(static_cast<size_t>(width) * height * 3);
  rows.resize(height);
  for (png_uint_32 y = 0; y < height; ++y) rows[y] = out.pixels.data() + static_cast<size_t>(y) * width * 3;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

}  // namespace trainbench::data
