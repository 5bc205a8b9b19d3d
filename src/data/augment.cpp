#include "data/augment.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace trainbench::data {

CropBox random_resized_crop(int width, int height, std::mt19937_64& rng) {
  const double area = static_cast<double>(width) * height;
  const double log_lo = std::log(3.0 / 4.0), log_hi = std::log(4.0 / 3.0);
  std::uniform_real_distribution<double> scale(0.08, 1.0), log_ratio(log_lo, log_hi);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * scale(rng);
    const double ratio = std::exp(log_ratio(rng));
    const int w = static_cast<int>(std::lround(std::sqrt(target * ratio)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / ratio)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const int x = std::uniform_int_distribution<int>(0, width - w)(rng);
      const int y = std::uniform_int_distribution<int>(0, height - h)(rng);
      return {double(x), double(y), double(w), double(h)};
    }
  }
  // Fallback: the whole image cut to the nearest allowed aspect ratio, centred.
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < 3.0 / 4.0) {
    h = static_cast<int>(std::lround(w / (3.0 / 4.0)));
  } else if (in_ratio > 4.0 / 3.0) {
    w = static_cast<int>(std::lround(h * (4.0 / 3.0)));
  }
  return {double((width - w) / 2), double((height - h) / 2), double(w), double(h)};
}

namespace {

// For each output coordinate: the two source indices and the weight of the second (bilinear,
// half-pixel centres, clamped at the edges).
struct Tap {
  int i0, i1;
  float w1;
};

std::vector<Tap> taps(double start, double length, int out, int limit) {
  std::vector<Tap> t(out);
  const double step = length / out;
  for (int o = 0; o < out; ++o) {
    double s = start + (o + 0.5) * step - 0.5;
    s = std::clamp(s, 0.0, static_cast<double>(limit - 1));
    const int i0 = static_cast<int>(s);
    const int i1 = std::min(i0 + 1, limit - 1);
    t[o] = {i0, i1, static_cast<float>(s - i0)};
  }
  return t;
}

// One pass for both outputs: `out(value, channel)` turns an interpolated value (0..255) into T.
template <typename T, typename Out>
void crop_resize(const uint8_t* rgb, int width, int height, const CropBox& box, int out_w, int out_h, bool flip,
                 bool channels_last, T* dst, Out out) {
  const std::vector<Tap> xs = taps(box.x, box.w, out_w, width);
  const std::vector<Tap> ys = taps(box.y, box.h, out_h, height);
  const size_t plane = static_cast<size_t>(out_w) * out_h;
  // Only the columns the crop touches are blended vertically.
  const int x_lo = std::min(xs.front().i0, xs.back().i0);
  const int x_hi = std::max(xs.front().i1, xs.back().i1);
  std::vector<float> row(static_cast<size_t>(width) * 3);  // the vertically interpolated source row
  std::vector<T> line(static_cast<size_t>(out_w) * 3);     // one output row, interleaved, converted
  for (int oy = 0; oy < out_h; ++oy) {
    const Tap ty = ys[oy];
    const uint8_t* r0 = rgb + static_cast<size_t>(ty.i0) * width * 3;
    const uint8_t* r1 = rgb + static_cast<size_t>(ty.i1) * width * 3;
    for (int k = x_lo * 3; k < (x_hi + 1) * 3; ++k) row[k] = r0[k] + ty.w1 * (static_cast<float>(r1[k]) - r0[k]);
    for (int ox = 0; ox < out_w; ++ox) {
      const Tap tx = xs[ox];
      const int dx = flip ? out_w - 1 - ox : ox;
      const float* a = &row[tx.i0 * 3];
      const float* b = &row[tx.i1 * 3];
      T* o = &line[dx * 3];
      for (int c = 0; c < 3; ++c) o[c] = out(a[c] + tx.w1 * (b[c] - a[c]), c);
    }
    if (channels_last) {
      std::copy(line.begin(), line.end(), dst + static_cast<size_t>(oy) * out_w * 3);
    } else {
      for (int c = 0; c < 3; ++c) {
        T* d = dst + c * plane + static_cast<size_t>(oy) * out_w;
        for (int x = 0; x < out_w; ++x) d[x] = line[x * 3 + c];
      }
    }
  }
}

}  // namespace

void imagenet_gain_bias(float gain[3], float bias[3]) {
  for (int c = 0; c < 3; ++c) {
    gain[c] = 1.0f / (255.0f * kImagenetStd[c]);
    bias[c] = -kImagenetMean[c] / kImagenetStd[c];
  }
}

void crop_resize_normalize(const uint8_t* rgb, int width, int height, const CropBox& box, int out_w, int out_h,
                           bool flip, bool channels_last, float* dst) {
  float gain[3], bias[3];
  imagenet_gain_bias(gain, bias);
  crop_resize(rgb, width, height, box, out_w, out_h, flip, channels_last, dst,
              [&](float v, int c) { return v * gain[c] + bias[c]; });
}

void crop_resize_bytes(const uint8_t* rgb, int width, int height, const CropBox& box, int out_w, int out_h, bool flip,
                       bool channels_last, uint8_t* dst) {
  // Interpolated values lie within their byte neighbours, so rounding stays in 0..255.
  crop_resize(rgb, width, height, box, out_w, out_h, flip, channels_last, dst,
              [](float v, int) { return static_cast<uint8_t>(std::lround(v)); });
}

}  // namespace trainbench::data
