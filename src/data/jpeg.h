// JPEG decode and encode through libjpeg-turbo's TurboJPEG API. Decoding can scale in the DCT domain
// (by M/8): a large photo is decoded straight to the smallest size its crop still needs, the trick that
// makes DALI and Pillow-SIMD fast, instead of decoding every pixel and throwing most away.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::data {

struct ScaleFactor {
  int num = 1, denom = 1;
  bool operator==(const ScaleFactor& o) const { return num * o.denom == o.num * denom; }
};

// libjpeg-turbo's scaled size of `dimension` (TJSCALED: rounded up).
int scaled_size(int dimension, ScaleFactor f);

// The smallest scaling factor of libjpeg-turbo's (at most 1) under which a region_w x region_h region of
// the image still covers at least out_w x out_h pixels; 1/1 when the region is no larger than that.
ScaleFactor choose_scale(int region_w, int region_h, int out_w, int out_h);

// An RGB image, rows packed (3 bytes a pixel).
struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;
};

// One decoder per thread (a TurboJPEG handle is not shared).
class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // Reads the size from the header; false (and error()) when `data` is not a JPEG.
  bool header(const uint8_t* data, size_t size, int& width, int& height);
  // Decodes at `scale` into `out` (its buffer reused); false (and error()) on a corrupt or truncated
  // file. A warning (e.g. extraneous bytes) still decodes.
  bool decode(const uint8_t* data, size_t size, ScaleFactor scale, RgbImage& out);
  const std::string& error() const { return error_; }

 private:
  void reset();
  void* handle_ = nullptr;
  std::string error_;
};

// Encodes packed RGB at `quality` (1-100, 4:2:0 subsampling, as cameras and ImageNet's files do).
std::vector<uint8_t> encode_jpeg(const uint8_t* rgb, int width, int height, int quality);

}  // namespace trainbench::data
