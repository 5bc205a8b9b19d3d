// Tiny JPEG folders made at test time (TurboJPEG compress): no image fixtures in the repository.
#pragma once
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "data/jpeg.h"
#include "data/loader.h"

namespace trainbench::test {

// A smooth RGB gradient of w x h; `shade` tells images apart.
inline std::vector<uint8_t> gradient_rgb(int w, int h, int shade) {
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &px[(static_cast<size_t>(y) * w + x) * 3];
      p[0] = static_cast<uint8_t>((x * 255) / std::max(1, w - 1));
      p[1] = static_cast<uint8_t>((y * 255) / std::max(1, h - 1));
      p[2] = static_cast<uint8_t>(shade);
    }
  }
  return px;
}

inline void write_bytes(const std::filesystem::path& p, const std::vector<uint8_t>& bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline void write_jpeg(const std::filesystem::path& p, int w, int h, int shade) {
  const auto px = gradient_rgb(w, h, shade);
  write_bytes(p, data::encode_jpeg(px.data(), w, h, 90));
}

// Makes each batch after sleeping `delay_s` (0: at once; batch 0 sleeps `first_delay_s` instead when
// that is given): one scalar tensor holding its index. The slowed source of the data-wait tests.
class FakeSource final : public data::BatchSource {
 public:
  explicit FakeSource(double delay_s, double first_delay_s = -1) : delay_s_(delay_s), first_delay_s_(first_delay_s) {}
  data::Batch make(int64_t index, data::StageTimes& t) override {
    const double delay = index == 0 && first_delay_s_ >= 0 ? first_delay_s_ : delay_s_;
    if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    ++t.samples;
    data::Batch b;
    b.tensors = {torch::full({1}, index, torch::kLong)};
    return b;
  }
  LoaderStats describe() const override {
    LoaderStats s;
    s.kind = "fake";
    s.source = "fake";
    return s;
  }

 private:
  double delay_s_, first_delay_s_;
};

}  // namespace trainbench::test
