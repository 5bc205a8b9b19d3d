#include "data/image_source.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <numeric>
#include <random>
#include <stdexcept>

#include "core/clock.h"
#include "data/augment.h"
#include "data/decode_crop.h"

namespace trainbench::data {
namespace {

using Clock = std::chrono::steady_clock;

// The file's bytes; false with the system's reason ("Permission denied") when it cannot be read.
bool read_file(const std::string& path, std::vector<uint8_t>& buf, std::string& why) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    why = std::strerror(errno);
    return false;
  }
  buf.clear();
  uint8_t chunk[1 << 16];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) buf.insert(buf.end(), chunk, chunk + n);
  const bool ok = std::ferror(f) == 0;
  if (!ok) why = std::string("cannot read it: ") + std::strerror(errno);
  std::fclose(f);
  return ok;
}

// A well-mixed 64-bit value from two (splitmix64's finaliser), so that neighbouring epochs and
// samples get unrelated random streams.
uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

ImageFolderSource::ImageFolderSource(ImageFolder folder, ImageSourceOptions options)
    : folder_(std::move(folder)), options_(options) {
  static std::atomic<uint64_t> sources{0};
  id_ = ++sources;  // tells this source's cached permutations from a destroyed one's at the same address
}

int64_t ImageFolderSource::file_at(int64_t position) const {
  const int64_t n = static_cast<int64_t>(folder_.files.size());
  const int64_t epoch = position / n;
  // One permutation per thread and epoch, kept while the thread works in that epoch.
  thread_local uint64_t owner = 0;
  thread_local int64_t cached_epoch = -1;
  thread_local std::vector<int64_t> perm;
  if (owner != id_ || cached_epoch != epoch) {
    perm.resize(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937_64 rng(mix(options_.seed, static_cast<uint64_t>(epoch)));
    std::shuffle(perm.begin(), perm.end(), rng);
    owner = id_;
    cached_epoch = epoch;
  }
  return perm[position % n];
}

bool ImageFolderSource::load(int64_t file, uint64_t sample_seed, void* dst, StageTimes& times) {
  thread_local std::vector<uint8_t> bytes;
  const std::string& path = folder_.files[file];
  const auto t = Clock::now();
  std::string why;
  const bool read = read_file(path, bytes, why);
  times.read_s += seconds_since(t);
  times.bytes += static_cast<int64_t>(bytes.size());
  SampleFormat format;
  format.width = options_.width;
  format.height = options_.height;
  format.uint8 = options_.uint8;
  format.channels_last = options_.channels_last;
  format.max_pixels = options_.max_pixels;
  // The crop and flip follow from the sample's seed and the image's size (torchvision's draws).
  auto choose = [&](int width, int height) {
    std::mt19937_64 rng(sample_seed);
    Crop c;
    c.box = random_resized_crop(width, height, rng);
    c.flip = std::bernoulli_distribution(0.5)(rng);
    return c;
  };
  DecodeTimes d;
  const bool ok = read && decode_crop(bytes.data(), bytes.size(), choose, format, dst, d, why);
  times.decode_s += d.decode_s;
  times.augment_s += d.augment_s;
  if (!ok) skip(file, why.empty() ? "not decodable" : why);
  return ok;
}

void ImageFolderSource::skip(int64_t file, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bad_.insert(file).second && first_bad_.empty()) {
    first_bad_ = folder_.files[file];
    first_bad_reason_ = why;
  }
}

Batch ImageFolderSource::make(int64_t index, StageTimes& times) {
  const int64_t b = options_.batch, n = static_cast<int64_t>(folder_.files.size());
  const int64_t h = options_.height, w = options_.width;
  // Channels-last: the same (B, 3, H, W) tensor whose memory is (B, H, W, 3), written pixel by pixel.
  // Pinned memory needs the GPU runtime, present on a GPU case only: a CPU build never asks for it.
  // The pixels are written in fp32 (or bytes) and converted to a reduced dtype at the end.
  const bool converted = !options_.uint8 && options_.dtype != at::kFloat;
  const auto opts = torch::TensorOptions().pinned_memory(options_.pin_memory && !converted);
  const auto pixel_opts = opts.dtype(options_.uint8 ? torch::kByte : torch::kFloat);
  torch::Tensor images = options_.channels_last ? torch::empty({b, h, w, 3}, pixel_opts).permute({0, 3, 1, 2})
                                                : torch::empty({b, 3, h, w}, pixel_opts);
  torch::Tensor labels = torch::empty({b}, opts.dtype(torch::kLong));
  Batch out;
  out.items.reserve(b);
  auto* base = static_cast<uint8_t*>(images.data_ptr());
  const int64_t image_bytes = 3 * h * w * static_cast<int64_t>(images.element_size());
  for (int64_t k = 0; k < b; ++k) {
    const int64_t position = index * b + k;
    // A file that does not decode gives its place to the next one of its epoch's order, wrapping
    // within that epoch: the n tries are the n files, each once (running on into the next epoch's
    // shuffle could try some twice and miss the one that decodes).
    bool ok = false;
    const int64_t epoch_start = position - position % n;
    for (int64_t tries = 0; tries < n && !ok; ++tries) {
      const int64_t file = file_at(epoch_start + (position % n + tries) % n);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (bad_.count(file) != 0) continue;
      }
      ok = load(file, mix(options_.seed ^ 0x5eedULL, static_cast<uint64_t>(position + tries)), base + k * image_bytes,
                times);
      if (ok) {
        labels.data_ptr<int64_t>()[k] = folder_.labels[file];
        out.items.push_back(file);
      }
    }
    if (!ok) {
      std::lock_guard<std::mutex> lock(mu_);
      throw std::runtime_error("--data " + folder_.root +
                               ": no file decodes as a JPEG or PNG (the first that failed: " + first_bad_ + ": " +
                               first_bad_reason_ + ")");
    }
    ++times.samples;
  }
  const auto t = Clock::now();
  if (converted) {
    images = images.to(options_.dtype);  // keeps the memory format
    if (options_.pin_memory) images = images.pin_memory();
  }
  times.copy_s += seconds_since(t);
  out.tensors = {images, labels};
  return out;
}

LoaderStats ImageFolderSource::describe() const {
  LoaderStats s;
  s.kind = "images";
  s.source = folder_.root;
  s.files = static_cast<int64_t>(folder_.files.size());
  std::lock_guard<std::mutex> lock(mu_);
  s.skipped_files = static_cast<int64_t>(bad_.size());
  s.first_skipped = first_bad_;
  s.first_skipped_reason = first_bad_reason_;
  s.max_image_pixels = options_.max_pixels;
  s.transfer = options_.uint8 ? "uint8" : "float";
  return s;
}

}  // namespace trainbench::data
