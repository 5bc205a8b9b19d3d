// The training transform torchvision users run on ImageNet, in C++: RandomResizedCrop(size, scale
// 0.08-1, ratio 3/4-4/3), RandomHorizontalFlip, ToTensor, Normalize(ImageNet mean, std), written
// straight into the batch in NCHW or channels-last order.
#pragma once
#include <cstdint>
#include <random>

namespace trainbench::data {

// A crop region in pixels of the image it was drawn for (floating point once scaled: see scaled()).
struct CropBox {
  double x = 0, y = 0, w = 0, h = 0;
  CropBox scaled(double sx, double sy) const { return {x * sx, y * sy, w * sx, h * sy}; }
};

// torchvision's RandomResizedCrop.get_params: up to 10 draws of an area fraction in [0.08, 1] and a
// log-uniform aspect ratio in [3/4, 4/3] until the box fits; else the central crop with the ratio
// clamped to that range.
CropBox random_resized_crop(int width, int height, std::mt19937_64& rng);

// ImageNet's per-channel mean and standard deviation (of pixel / 255), as torchvision's references.
constexpr float kImagenetMean[3] = {0.485f, 0.456f, 0.406f};
constexpr float kImagenetStd[3] = {0.229f, 0.224f, 0.225f};

// Resizes `box` of a packed RGB image to out_w x out_h as Pillow's bilinear resize of the cropped image
// does (what torchvision's RandomResizedCrop runs on ImageFolder's PIL images): a triangle filter
// stretched by the shrink factor (antialias), of the crop's own pixels only, horizontal pass first and
// rounded to bytes, then vertical. Mirrors it when `flip`, and writes (pixel / 255 - mean[c]) / std[c] to
// `dst`: planar (C, H, W) when `channels_last` is false, else interleaved (H, W, C). The box may have
// fractional edges (a crop mapped onto a DCT-scaled decode); the pixels it touches count as the crop's.
void crop_resize_normalize(const uint8_t* rgb, int width, int height, const CropBox& box, int out_w, int out_h,
                           bool flip, bool channels_last, float* dst);

// The same crop, resize and flip, without the normalize: each resampled value rounded to the nearest
// byte, as Pillow's output is (--data-transfer uint8; the device normalizes, data/device_feed.h).
// Differs from the float path, once normalized, by at most half a grey level: 0.5 * gain[c].
void crop_resize_bytes(const uint8_t* rgb, int width, int height, const CropBox& box, int out_w, int out_h, bool flip,
                       bool channels_last, uint8_t* dst);

// Normalize as an affine map of the byte value p: (p / 255 - mean[c]) / std[c] = p * gain[c] + bias[c].
void imagenet_gain_bias(float gain[3], float bias[3]);

}  // namespace trainbench::data
