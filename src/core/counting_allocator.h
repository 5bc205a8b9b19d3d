// The CPU allocator a case's child runs under: it wraps LibTorch's own and counts the bytes of every
// CPU tensor, so current and peak tensor memory are exact (max RSS also counts libraries, thread
// stacks and the heap's slack). Thread-safe: intra-op threads allocate concurrently.
//
// Two owners: the model (the default) and the data loader. A thread that makes batches says so
// (ScopedMemoryOwner), and what it allocates is counted as the loader's: its prefetch queue and the
// batches in the making, which on a GPU case would be host memory and never the device's. When the
// model takes a batch, hand_over_to_model moves its bytes to the model's count. In core, not memory/,
// because the loader (data/) tags its threads and hands batches over.
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

  // The model's tensor bytes (everything not the loader's).
  int64_t current_bytes() const { return current_.load(std::memory_order_relaxed); }
  int64_t peak_bytes() const { return peak_.load(std::memory_order_relaxed); }
  // Bytes ever allocated and blocks live, both owners.
  int64_t allocated_bytes_total() const { return total_.load(std::memory_order_relaxed); }
  int64_t live_blocks() const { return blocks_.load(std::memory_order_relaxed); }
  // The loader's tensor bytes: now, and at their own peak.
  int64_t loader_current_bytes() const { return loader_current_.load(std::memory_order_relaxed); }
  int64_t loader_peak_bytes() const { return loader_peak_.load(std::memory_order_relaxed); }
  // Both peaks start again from the bytes live now.
  void reset_peak();

  // The block behind `p` (a DataPtr this allocator made, else nothing happens) becomes the model's:
  // its bytes leave the loader's count and join the model's. The caller holds the block, so it cannot
  // be freed meanwhile. Returns the bytes moved (0: not the loader's, or not this allocator's).
  int64_t hand_over_to_model(const c10::DataPtr& p);

 private:
  static void release(void* data);

  // Every block carries its size and owner in a header just before the tensor's bytes, so counting
  // costs a few atomic adds and no lock or table: the timed steps run under this allocator. 64 bytes
  // keep the base allocator's 64-byte alignment. (LibTorch's raw_allocate needs the data pointer to be
  // the deleter's context, so the size cannot travel in the context instead.)
  static constexpr size_t kHeader = 64;

  void add_model_bytes(int64_t bytes) const;

  c10::Allocator* base_;
  mutable std::atomic<int64_t> current_{0}, peak_{0}, total_{0}, blocks_{0};
  mutable std::atomic<int64_t> loader_current_{0}, loader_peak_{0};
};

// Whose tensors this thread allocates. A loader thread holds a ScopedMemoryOwner(loader) while it makes
// batches; every other thread allocates the model's.
enum class MemoryOwner : int64_t { model = 0, loader = 1 };
MemoryOwner thread_memory_owner();
class ScopedMemoryOwner {
 public:
  explicit ScopedMemoryOwner(MemoryOwner owner);
  ~ScopedMemoryOwner();
  ScopedMemoryOwner(const ScopedMemoryOwner&) = delete;
  ScopedMemoryOwner& operator=(const ScopedMemoryOwner&) = delete;

 private:
  MemoryOwner previous_;
};

// Installs the counting allocator as LibTorch's CPU allocator (once per process; later calls return the
// same one). Tensors allocated before it keep their own deleter and are not counted.
CountingAllocator& install_counting_allocator();
// The installed counting allocator, or nullptr when none was installed in this process.
CountingAllocator* counting_allocator();

}  // namespace trainbench::memory
