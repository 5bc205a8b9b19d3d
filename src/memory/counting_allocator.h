// The CPU allocator a case's child runs under: it wraps LibTorch's own and counts the bytes of every
// CPU tensor, so current and peak tensor memory are exact (max RSS also counts libraries, thread
// stacks and the heap's slack). Thread-safe: intra-op threads allocate concurrently.
#pragma once
#include <c10/core/Allocator.h>
#include <torch/version.h>

#include <atomic>
#include <cstdint>

namespace trainbench::memory {

// LibTorch 2.3 made Allocator::allocate non-const and added the pure virtual copy_data.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define TRAINBENCH_ALLOCATOR_2_3 1
#define TRAINBENCH_ALLOCATE_CONST
#else
#define TRAINBENCH_ALLOCATE_CONST const
#endif

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base);
  c10::DataPtr allocate(size_t n) TRAINBENCH_ALLOCATE_CONST override;
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
#ifdef TRAINBENCH_ALLOCATOR_2_3
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
#endif

  int64_t current_bytes() const { return current_.load(std::memory_order_relaxed); }
  int64_t peak_bytes() const { return peak_.load(std::memory_order_relaxed); }
  int64_t allocated_bytes_total() const { return total_.load(std::memory_order_relaxed); }
  int64_t live_blocks() const { return blocks_.load(std::memory_order_relaxed); }
  // The peak starts again from the bytes live now.
  void reset_peak();

 private:
  static void release(void* data);

  // Every block carries its size in a header just before the tensor's bytes, so counting costs a few
  // atomic adds and no lock or table: the timed steps run under this allocator. 64 bytes keep the base
  // allocator's 64-byte alignment. (LibTorch's raw_allocate needs the data pointer to be the deleter's
  // context, so the size cannot travel in the context instead.)
  static constexpr size_t kHeader = 64;

  c10::Allocator* base_;
  mutable std::atomic<int64_t> current_{0}, peak_{0}, total_{0}, blocks_{0};
};

// Installs the counting allocator as LibTorch's CPU allocator (once per process; later calls return the
// same one). Tensors allocated before it keep their own deleter and are not counted.
CountingAllocator& install_counting_allocator();
// The installed counting allocator, or nullptr when none was installed in this process.
CountingAllocator* counting_allocator();

}  // namespace trainbench::memory
