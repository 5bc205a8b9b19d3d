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

// The triangle (bilinear) filter.
double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Pillow's resampling weights along one axis: output o is centred at in0 + (o + 0.5) * scale in the
// source (scale = length / out); when shrinking (scale > 1) the triangle is stretched by the scale, so
// that every source pixel under the output contributes (the antialias), else it is plain bilinear. Only
// the source pixels [lo, hi) of the crop are used, and the weights are normalised over them: an edge
// output blends pixels of the crop only, as Pillow's resize of the cropped image does.
struct Weights {
  int taps = 0;
  std::vector<int> first, count;  // per output: the first source index and how many follow
  std::vector<float> w;           // per output: `taps` slots, the first `count` used
};

Weights weights(double in0, double length, int out, int lo, int hi) {
  const double scale = length / out;
  const double stretch = std::max(scale, 1.0);
  const double support = stretch;  // the triangle's radius, 1, stretched
  Weights r;
  r.taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  r.first.resize(out);
  r.count.resize(out);
  r.w.assign(static_cast<size_t>(out) * r.taps, 0.0f);
  std::vector<double> k(r.taps);
  for (int o = 0; o < out; ++o) {
    const double center = in0 + (o + 0.5) * scale;
    const int x0 = std::max(static_cast<int>(std::floor(center - support + 0.5)), lo);
    const int x1 = std::min(static_cast<int>(std::floor(center + support + 0.5)), hi);
    double sum = 0.0;
    for (int x = x0; x < x1; ++x) sum += k[x - x0] = triangle((x + 0.5 - center) / stretch);
    r.first[o] = x0;
    r.count[o] = x1 - x0;  // at least the pixel under the centre, which lies in [lo, hi)
    for (int x = x0; x < x1; ++x) r.w[static_cast<size_t>(o) * r.taps + (x - x0)] = static_cast<float>(k[x - x0] / sum);
  }
  return r;
}

// Pillow rounds the horizontal pass to bytes before the vertical one (round half up).
float round_byte(float v) { return std::floor(v + 0.5f); }

// Both passes for both outputs: `out(value, channel)` turns a resampled value (0..255) into T.
// Horizontal first, over the source rows the vertical pass reads, then vertical, as Pillow does.
template <typename T, typename Out>
void crop_resize(const uint8_t* rgb, int width, int height, const CropBox& box, int out_w, int out_h, bool flip,
                 bool channels_last, T* dst, Out out) {
  // The crop's pixels: those the box covers, wholly or in part (a DCT-scaled box has fractional edges).
  const int x_lo = std::clamp(static_cast<int>(std::floor(box.x + 1e-9)), 0, width - 1);
  const int x_hi = std::clamp(static_cast<int>(std::ceil(box.x + box.w - 1e-9)), x_lo + 1, width);
  const int y_lo = std::clamp(static_cast<int>(std::floor(box.y + 1e-9)), 0, height - 1);
  const int y_hi = std::clamp(static_cast<int>(std::ceil(box.y + box.h - 1e-9)), y_lo + 1, height);
  const Weights xs = weights(box.x, box.w, out_w, x_lo, x_hi);
  const Weights ys = weights(box.y, box.h, out_h, y_lo, y_hi);
  // Rows [r0, r1) are read by the vertical pass; each is resampled horizontally once.
  const int r0 = ys.first.front();
  int r1 = r0;
  for (int o = 0; o < out_h; ++o) r1 = std::max(r1, ys.first[o] + ys.count[o]);
  const size_t row_len = static_cast<size_t>(out_w) * 3;
  std::vector<float> rows(static_cast<size_t>(r1 - r0) * row_len);
  for (int y = r0; y < r1; ++y) {
    const uint8_t* src = rgb + static_cast<size_t>(y) * width * 3;
    float* h = &rows[static_cast<size_t>(y - r0) * row_len];
    for (int ox = 0; ox < out_w; ++ox) {
      const float* w = &xs.w[static_cast<size_t>(ox) * xs.taps];
      const uint8_t* p = src + static_cast<size_t>(xs.first[ox]) * 3;
      float acc[3] = {0.0f, 0.0f, 0.0f};
      for (int t = 0; t < xs.count[ox]; ++t) {
        for (int c = 0; c < 3; ++c) acc[c] += w[t] * p[t * 3 + c];
      }
      for (int c = 0; c < 3; ++c) h[ox * 3 + c] = round_byte(acc[c]);
    }
  }
  const size_t plane = static_cast<size_t>(out_w) * out_h;
  std::vector<T> line(row_len);  // one output row, interleaved, converted
  for (int oy = 0; oy < out_h; ++oy) {
    const float* w = &ys.w[static_cast<size_t>(oy) * ys.taps];
    const float* base = &rows[static_cast<size_t>(ys.first[oy] - r0) * row_len];
    for (int ox = 0; ox < out_w; ++ox) {
      float acc[3] = {0.0f, 0.0f, 0.0f};
      for (int t = 0; t < ys.count[oy]; ++t) {
        const float* p = base + t * row_len + ox * 3;
        for (int c = 0; c < 3; ++c) acc[c] += w[t] * p[c];
      }
      T* o = &line[(flip ? out_w - 1 - ox : ox) * 3];
      for (int c = 0; c < 3; ++c) o[c] = out(acc[c], c);
    }
    if (channels_last) {
      std::copy(line.begin(), line.end(), dst + static_cast<size_t>(oy) * row_len);
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
  // The weights are non-negative and sum to 1, so a resampled value stays in 0..255 (to float
  // rounding, clamped).
  crop_resize(rgb, width, height, box, out_w, out_h, flip, channels_last, dst,
              [](float v, int) { return static_cast<uint8_t>(std::clamp(round_byte(v), 0.0f, 255.0f)); });
}

}  // namespace trainbench::data
