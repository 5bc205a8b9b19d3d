#include "data/decode_crop.h"

#include <atomic>

#include <chrono>
#include <memory>

#include "core/clock.h"
#include "data/jpeg.h"
#include "data/png.h"

namespace trainbench::data {

namespace {
std::atomic<int64_t> g_max_image_pixels{kMaxImagePixels};
}  // namespace

int64_t max_image_pixels() { return g_max_image_pixels.load(); }
void set_max_image_pixels(int64_t pixels) { g_max_image_pixels = pixels; }
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

ScaleFactor decode_scale(int box_w, int box_h, int out_w, int out_h) {
  return choose_scale(box_w, box_h, 2 * out_w, 2 * out_h);
}

bool decode_crop(const uint8_t* bytes, size_t size, const std::function<Crop(int width, int height)>& choose,
                 const SampleFormat& format, void* dst, DecodeTimes& times, std::string& why) {
  thread_local std::unique_ptr<JpegDecoder> decoder;  // one TurboJPEG handle per thread
  thread_local RgbImage image;                        // its buffer reused
  if (!decoder) decoder = std::make_unique<JpegDecoder>();
  auto t = Clock::now();
  // A PNG is told by its bytes, not its name.
  const bool png = is_png(bytes, size);
  int width = 0, height = 0;
  if (png ? !png_size(bytes, size, width, height) : !decoder->header(bytes, size, width, height)) {
    why = png ? "PNG: no image header" : decoder->error();
    times.decode_s += seconds_since(t);
    return false;
  }
  if (static_cast<int64_t>(width) * height > format.max_pixels) {
    why = "its header claims " + std::to_string(width) + "x" + std::to_string(height) + " pixels, over the limit of " +
          std::to_string(format.max_pixels);
    times.decode_s += seconds_since(t);
    return false;
  }
  const Crop crop = choose(width, height);
  const ScaleFactor scale =
      png ? ScaleFactor{1, 1}
          : decode_scale(static_cast<int>(crop.box.w), static_cast<int>(crop.box.h), format.width, format.height);
  const bool ok = png ? decode_png(bytes, size, image, why) : decoder->decode(bytes, size, scale, image);
  if (!ok && !png) why = decoder->error();
  times.decode_s += seconds_since(t);
  if (!ok) return false;
  t = Clock::now();
  // Scaled pixel i covers full pixels [i, i + 1) * denom / num: the exact factor, not the ratio of the
  // sizes (libjpeg rounds the scaled size up).
  const double f = static_cast<double>(scale.num) / scale.denom;
  const CropBox box = crop.box.scaled(f, f);
  if (format.uint8) {
    crop_resize_bytes(image.pixels.data(), image.width, image.height, box, format.width, format.height, crop.flip,
                      format.channels_last, static_cast<uint8_t*>(dst));
  } else {
    crop_resize_normalize(image.pixels.data(), image.width, image.height, box, format.width, format.height, crop.flip,
                          format.channels_last, static_cast<float*>(dst));
  }
  times.augment_s += seconds_since(t);
  return true;
}

}  // namespace trainbench::data
