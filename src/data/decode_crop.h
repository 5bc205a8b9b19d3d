// One file as the loader turns it into a training sample: the size from the header, checked against a
// pixel limit before anything is allocated; the crop chosen for that size; the decode (a JPEG at the
// smallest DCT scale its crop still covers, data/jpeg.h; a PNG whole, data/png.h); then the crop, flip
// and resize (data/augment.h) into the batch. The pixel tests run the same function on fixed crops.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "data/augment.h"
#include "data/jpeg.h"

namespace trainbench::data {

// Pillow's DecompressionBombError limit: twice its MAX_IMAGE_PIXELS (1024^3 / 4 / 3 = 89,478,485), so
// a file Pillow (and torchvision's ImageFolder) would open, trainbench opens too.
constexpr int64_t kMaxImagePixels = 2 * (int64_t{1024} * 1024 * 1024 / 4 / 3);

// The pixel limit of this process's image sources: kMaxImagePixels unless --max-image-pixels set
// another (a case's child sets it before it builds its loader; `trainbench data` before it measures).
int64_t max_image_pixels();
void set_max_image_pixels(int64_t pixels);

// What a sample becomes: its size, bytes or normalized floats, the memory order, and the largest image
// (width x height, as its header claims) that is decoded at all.
struct SampleFormat {
  int width = 224, height = 224;
  bool uint8 = false;
  bool channels_last = false;
  int64_t max_pixels = kMaxImagePixels;
};

// A crop of the full image (its pixels) and whether it is mirrored.
struct Crop {
  CropBox box;
  bool flip = false;
};

struct DecodeTimes {
  double decode_s = 0, augment_s = 0;  // header and decode; crop, resize, flip and convert
};

// The DCT scale a JPEG is decoded at for a box_w x box_h crop to out_w x out_h: the smallest under which
// the box still covers twice the output, so that the antialiased resample does the last reduction as
// Pillow's does on the full image. Straight to the output size (a margin of 1) the DCT averages 8x8
// blocks where Pillow's filter is a triangle: against torchvision's pixels (tests/data/test_pixels.cpp) a
// margin of 1 gave a mean error of up to 2.1 grey levels and a maximum of 14, 1.5 gave 0.79 and 6, 2
// gives 0.61 and 5, at the same loader speed within noise (bench/loader_vs_torchvision.py).
ScaleFactor decode_scale(int box_w, int box_h, int out_w, int out_h);

// Decodes `bytes` and writes the crop `choose(width, height)` gives into `dst` (floats, or bytes when
// format.uint8). False with `why` when the bytes are no JPEG or PNG, are corrupt or truncated, or claim
// more pixels than format.max_pixels. A JPEG is decoded at decode_scale(); the box is mapped onto the
// scaled image by that scale's exact num/denom.
bool decode_crop(const uint8_t* bytes, size_t size, const std::function<Crop(int width, int height)>& choose,
                 const SampleFormat& format, void* dst, DecodeTimes& times, std::string& why);

}  // namespace trainbench::data
