// PNG files in image folders: each kind of PNG (RGB, gray, gray at 1 bit, alpha, 16-bit, palette,
// interlaced), written here with libpng, decodes to the pixels Pillow's convert("RGB") gives; a
// truncated one is refused; a folder of PNGs trains through the same crop and normalize.
#include <gtest/gtest.h>
#include <png.h>

#include <unistd.h>

#include <csetjmp>
#include <filesystem>

#include "data/augment.h"
#include "data/image_folder.h"
#include "data/image_source.h"
#include "data/png.h"
#include "data_util.h"

namespace trainbench {
namespace {

namespace fs = std::filesystem;

struct PngSpec {
  int width = 0, height = 0;
  int color = PNG_COLOR_TYPE_RGB;
  int bit_depth = 8;
  std::vector<uint8_t> rows;          // packed rows as PNG stores them (16-bit samples big-endian)
  std::vector<png_color> palette;     // PNG_COLOR_TYPE_PALETTE
  std::vector<uint8_t> transparency;  // a palette's tRNS alpha per entry
  bool interlaced = false;
};

void append(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<std::vector<uint8_t>*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + n);
}
void no_flush(png_structp) {}

// libpng's own writer: the files are real PNGs, not bytes this test's reader agrees with by construction.
std::vector<uint8_t> write_png(const PngSpec& s) {
  std::vector<uint8_t> bytes;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    ADD_FAILURE() << "libpng could not write the test image";
    return {};
  }
  png_set_write_fn(png, &bytes, append, no_flush);
  png_set_IHDR(png, info, s.width, s.height, s.bit_depth, s.color,
               s.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (!s.palette.empty()) png_set_PLTE(png, info, s.palette.data(), static_cast<int>(s.palette.size()));
  if (!s.transparency.empty()) {
    png_set_tRNS(png, info, s.transparency.data(), static_cast<int>(s.transparency.size()), nullptr);
  }
  png_write_info(png, info);
  const size_t row_bytes = s.rows.size() / s.height;
  std::vector<png_bytep> rows(s.height);
  for (int y = 0; y < s.height; ++y) rows[y] = const_cast<png_bytep>(s.rows.data()) + y * row_bytes;
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return bytes;
}

data::RgbImage decode(const std::vector<uint8_t>& bytes) {
  data::RgbImage out;
  std::string error;
  EXPECT_TRUE(data::decode_png(bytes.data(), bytes.size(), out, error)) << error;
  return out;
}

TEST(Png, RgbAndInterlacedRgbDecodeToTheirPixels) {
  PngSpec s;
  s.width = 5;
  s.height = 3;
  s.rows = test::gradient_rgb(5, 3, 77);
  for (bool interlaced : {false, true}) {
    s.interlaced = interlaced;
    const data::RgbImage img = decode(write_png(s));
    EXPECT_EQ(img.width, 5);
    EXPECT_EQ(img.height, 3);
    EXPECT_EQ(img.pixels, s.rows) << (interlaced ? "interlaced" : "plain");
  }
}

TEST(Png, GrayIsReplicatedAndOneBitGrayIsScaledToFullRange) {
  PngSpec g;
  g.width = 4;
  g.height = 2;
  g.color = PNG_COLOR_TYPE_GRAY;
  g.rows = {0, 10, 200, 255, 1, 2, 3, 4};
  data::RgbImage img = decode(write_png(g));
  ASSERT_EQ(img.pixels.size(), 24u);
  for (size_t i = 0; i < g.rows.size(); ++i) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(img.pixels[i * 3 + c], g.rows[i]);
  }
  // 1-bit gray, 8 pixels in one byte, most significant bit first: 1 -> 255, 0 -> 0 (Pillow's "1" to RGB).
  PngSpec b;
  b.width = 8;
  b.height = 1;
  b.color = PNG_COLOR_TYPE_GRAY;
  b.bit_depth = 1;
  b.rows = {0b10110001};
  img = decode(write_png(b));
  const int bits[8] = {1, 0, 1, 1, 0, 0, 0, 1};
  for (int x = 0; x < 8; ++x) EXPECT_EQ(img.pixels[x * 3], bits[x] ? 255 : 0) << x;
}

TEST(Png, AlphaIsDroppedNotComposited) {
  PngSpec s;
  s.width = 2;
  s.height = 1;
  s.color = PNG_COLOR_TYPE_RGB_ALPHA;
  s.rows = {10, 20, 30, 0, 200, 100, 50, 128};  // a fully transparent pixel keeps its colour
  EXPECT_EQ(decode(write_png(s)).pixels, (std::vector<uint8_t>{10, 20, 30, 200, 100, 50}));
  PngSpec ga;
  ga.width = 1;
  ga.height = 1;
  ga.color = PNG_COLOR_TYPE_GRAY_ALPHA;
  ga.rows = {99, 7};
  EXPECT_EQ(decode(write_png(ga)).pixels, (std::vector<uint8_t>{99, 99, 99}));
}

TEST(Png, SixteenBitSamplesKeepTheirHighByte) {
  PngSpec s;
  s.width = 2;
  s.height = 1;
  s.bit_depth = 16;
  // Samples 0x1234 0xABCD 0xFFFF / 0x00FF 0x8000 0x0101, big-endian as PNG stores them.
  s.rows = {0x12, 0x34, 0xAB, 0xCD, 0xFF, 0xFF, 0x00, 0xFF, 0x80, 0x00, 0x01, 0x01};
  EXPECT_EQ(decode(write_png(s)).pixels, (std::vector<uint8_t>{0x12, 0xAB, 0xFF, 0x00, 0x80, 0x01}));
}

TEST(Png, PaletteIsExpandedAndItsTransparencyIgnored) {
  PngSpec s;
  s.width = 3;
  s.height = 2;
  s.color = PNG_COLOR_TYPE_PALETTE;
  s.palette = {{255, 0, 0}, {0, 128, 0}, {1, 2, 3}};
  s.transparency = {0, 255, 17};
  s.rows = {2, 0, 1, 1, 1, 0};
  EXPECT_EQ(decode(write_png(s)).pixels,
            (std::vector<uint8_t>{1, 2, 3, 255, 0, 0, 0, 128, 0, 0, 128, 0, 0, 128, 0, 255, 0, 0}));
}

TEST(Png, TruncatedOrForeignBytesAreRefused) {
  PngSpec s;
  s.width = 16;
  s.height = 16;
  s.rows = test::gradient_rgb(16, 16, 3);
  std::vector<uint8_t> bytes = write_png(s);
  data::RgbImage img;
  std::string error;
  bytes.resize(bytes.size() / 2);
  EXPECT_FALSE(data::decode_png(bytes.data(), bytes.size(), img, error));
  EXPECT_FALSE(error.empty());
  const std::vector<uint8_t> jpeg = data::encode_jpeg(s.rows.data(), 16, 16, 90);
  EXPECT_FALSE(data::is_png(jpeg.data(), jpeg.size()));
  EXPECT_FALSE(data::decode_png(jpeg.data(), jpeg.size(), img, error));
}

// A folder of PNGs (and a broken one) trains like one of JPEGs: listed, cropped, normalized. Each image is
// one flat colour, so every output value is that colour's normalized value whatever the crop and flip:
// (v / 255 - mean[c]) / std[c], computed here from the ImageNet constants.
TEST(Png, AFolderOfPngsIsLoadedThroughTheSameTransform) {
  const fs::path root = fs::temp_directory_path() / ("trainbench_png_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const uint8_t colour[2][3] = {{30, 60, 90}, {250, 5, 128}};
  for (int k = 0; k < 2; ++k) {
    PngSpec s;
    s.width = 40 + k;
    s.height = 30;
    for (int i = 0; i < s.width * s.height; ++i) s.rows.insert(s.rows.end(), colour[k], colour[k] + 3);
    test::write_bytes(root / ("class" + std::to_string(k)) / ("img.PNG"), write_png(s));
  }
  test::write_bytes(root / "class1" / "broken.png", {0x89, 'P', 'N', 'G', 1, 2, 3});
  const data::ImageFolder folder = data::scan_image_folder(root.string());
  ASSERT_EQ(folder.files.size(), 3u);
  data::ImageSourceOptions o;
  o.batch = 3;  // the whole first epoch: the broken file is met, and its place taken by a good one
  o.width = o.height = 8;
  data::ImageFolderSource source(folder, o);
  data::StageTimes t;
  const data::Batch b = source.make(0, t);
  ASSERT_EQ(b.tensors[0].sizes(), (std::vector<int64_t>{3, 3, 8, 8}));
  for (int k = 0; k < 3; ++k) {
    const int64_t label = b.tensors[1][k].item<int64_t>();
    for (int c = 0; c < 3; ++c) {
      const double expected = (colour[label][c] / 255.0 - data::kImagenetMean[c]) / data::kImagenetStd[c];
      EXPECT_NEAR(b.tensors[0][k][c].min().item<double>(), expected, 1e-5);
      EXPECT_NEAR(b.tensors[0][k][c].max().item<double>(), expected, 1e-5);
    }
  }
  const LoaderStats st = source.describe();
  EXPECT_EQ(st.skipped_files, 1);
  EXPECT_EQ(st.first_skipped, (root / "class1" / "broken.png").string());
  fs::remove_all(root);
}

}  // namespace
}  // namespace trainbench
