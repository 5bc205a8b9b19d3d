#include "data/make_data.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "data/data_error.h"
#include "data/jpeg.h"

namespace fs = std::filesystem;

namespace trainbench::data {
namespace {

// Value noise: random values on a coarse grid, smoothly interpolated; `cell` pixels per grid step.
class ValueNoise {
 public:
  ValueNoise(int width, int height, double cell, std::mt19937_64& rng)
      : cell_(cell), gw_(static_cast<int>(width / cell) + 2), gh_(static_cast<int>(height / cell) + 2), v_(gw_ * gh_) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto& x : v_) x = u(rng);
  }
  float at(int x, int y) const {
    const double fx = x / cell_, fy = y / cell_;
    const int ix = static_cast<int>(fx), iy = static_cast<int>(fy);
    const float tx = smooth(static_cast<float>(fx - ix)), ty = smooth(static_cast<float>(fy - iy));
    const float a = v_[iy * gw_ + ix], b = v_[iy * gw_ + ix + 1];
    const float c = v_[(iy + 1) * gw_ + ix], d = v_[(iy + 1) * gw_ + ix + 1];
    return (a + tx * (b - a)) + ty * ((c + tx * (d - c)) - (a + tx * (b - a)));
  }

 private:
  static float smooth(float t) { return t * t * (3.0f - 2.0f * t); }
  double cell_;
  int gw_, gh_;
  std::vector<float> v_;
};

struct Blob {
  double cx, cy, rx, ry, soft;
  float color[3];
};

}  // namespace

std::vector<uint8_t> make_photo(int width, int height, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto colour = [&](float* c) {
    for (int k = 0; k < 3; ++k) c[k] = static_cast<float>(40 + 180 * u(rng));
  };
  float top[3], bottom[3];
  colour(top);
  colour(bottom);
  std::vector<Blob> blobs(3 + static_cast<int>(u(rng) * 5));
  for (auto& b : blobs) {
    b.cx = u(rng) * width;
    b.cy = u(rng) * height;
    b.rx = (0.08 + 0.3 * u(rng)) * width;
    b.ry = (0.08 + 0.3 * u(rng)) * height;
    b.soft = 0.05 + 0.3 * u(rng);
    colour(b.color);
  }
  // Texture at three scales (object shading, surface, fine detail), then per-pixel grain.
  const ValueNoise coarse(width, height, 48.0, rng), medium(width, height, 12.0, rng), fine(width, height, 2.5, rng);
  const float texture = static_cast<float>(20 + 30 * u(rng));
  std::normal_distribution<float> grain(0.0f, 14.0f);
  std::vector<uint8_t> px(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    const float t = static_cast<float>(y) / std::max(1, height - 1);
    for (int x = 0; x < width; ++x) {
      float c[3];
      for (int k = 0; k < 3; ++k) c[k] = top[k] + t * (bottom[k] - top[k]);
      for (const auto& b : blobs) {
        const double dx = (x - b.cx) / b.rx, dy = (y - b.cy) / b.ry;
        const double r = std::sqrt(dx * dx + dy * dy);
        const float alpha = static_cast<float>(std::clamp((1.0 - r) / b.soft, 0.0, 1.0));  // soft edge
        for (int k = 0; k < 3; ++k) c[k] += alpha * (b.color[k] - c[k]);
      }
      const float shade = texture * (0.6f * coarse.at(x, y) + 0.4f * medium.at(x, y) + 1.3f * fine.at(x, y));
      uint8_t* p = &px[(static_cast<size_t>(y) * width + x) * 3];
      for (int k = 0; k < 3; ++k) p[k] = static_cast<uint8_t>(std::clamp(c[k] + shade + grain(rng), 0.0f, 255.0f));
    }
  }
  return px;
}

MadeData make_dataset(const std::string& dir, int64_t images, int classes, uint64_t seed) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec))) {
    throw DataError("make-data " + dir + ": exists and is not an empty folder (nothing is mixed into it)");
  }
  fs::create_directories(dir, ec);
  if (ec) throw DataError("make-data " + dir + ": " + ec.message());
  std::mt19937_64 rng(seed);
  // ImageNet's training images: mostly around 500 x 375 before any resizing, many smaller; a spread
  // around 400 x 350 keeps the decode cost typical.
  std::normal_distribution<double> w(400.0, 60.0), h(350.0, 50.0);
  MadeData made;
  for (int64_t i = 0; i < images; ++i) {
    const int cls = static_cast<int>(i % classes);
    const fs::path folder = fs::path(dir) / fmt::format("class{:03d}", cls);
    fs::create_directories(folder);
    const int width = static_cast<int>(std::clamp(w(rng), 160.0, 800.0));
    const int height = static_cast<int>(std::clamp(h(rng), 140.0, 700.0));
    const auto px = make_photo(width, height, rng);
    const auto jpeg = encode_jpeg(px.data(), width, height, 90);
    const fs::path file = folder / fmt::format("img{:06d}.jpg", i);
    // The system's reason reaches the user ("No space left on device"): a full disk often shows only
    // when the file is closed.
    errno = 0;
    std::FILE* out = std::fopen(file.c_str(), "wb");
    bool written = out != nullptr && std::fwrite(jpeg.data(), 1, jpeg.size(), out) == jpeg.size();
    int err = errno;
    if (out != nullptr && std::fclose(out) != 0 && written) {
      written = false;
      err = errno;
    }
    if (!written) {
      throw std::runtime_error("make-data: cannot write " + file.string() + ": " +
                               (err != 0 ? std::strerror(err) : "unknown error"));
    }
    ++made.files;
    made.bytes += static_cast<int64_t>(jpeg.size());
  }
  return made;
}

}  // namespace trainbench::data
