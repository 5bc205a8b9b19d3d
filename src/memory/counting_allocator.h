// The CPU allocator a case's child runs under: it wraps LibTorch's own and counts the bytes of every
// CPU tensor, so current and peak tensor memory are exact (max RSS also counts libraries, thread
// stacks and the heap's slack). Thread-safe: intra-op threads allocate concurrently.
#pragma once
#include <c10/core/Allocator.h>
#include <torch/version.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace trainbench::memory {

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base);
  c10::DataPtr allocate(size_t n) const override;
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
#endif

  int64_t current_bytes() const { return current_.load(std::memory_order_relaxed); }
  int64_t peak_bytes() const { return peak_.load(std::memory_order_relaxed); }
  int64_t allocated_bytes_total() const { return total_.load(std::memory_order_relaxed); }
  int64_t live_blocks() const;
  // The peak starts again from the bytes live now.
  void reset_peak();

 private:
  static void release(void* data);
  void forget(void* data);

  // Sizes of live blocks by address, in shards so that threads rarely wait on one another. LibTorch's
  // raw_allocate needs the data pointer to be the deleter's context, so the size cannot travel in it.
  static constexpr size_t kShards = 64;
  struct Shard {
    std::mutex mutex;
    std::unordered_map<void*, int64_t> sizes;
  };
  Shard& shard_of(void* p) const { return shards_[(reinterpret_cast<uintptr_t>(p) >> 6) % kShards]; }

  c10::Allocator* base_;
  mutable Shard shards_[kShards];
  mutable std::atomic<int64_t> current_{0}, peak_{0}, total_{0};
};

// Installs the counting allocator as LibTorch's CPU allocator (once per process; later calls return the
// same one). Tensors allocated before it keep their own deleter and are not counted.
CountingAllocator& install_counting_allocator();
// The installed counting allocator, or nullptr when none was installed in this process.
CountingAllocator* counting_allocator();

}  // namespace trainbench::memory
