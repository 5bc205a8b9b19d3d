#include "memory/counting_allocator.h"

#include <c10/core/CPUAllocator.h>

namespace trainbench::memory {
namespace {

std::atomic<CountingAllocator*> g_installed{nullptr};

}  // namespace

CountingAllocator::CountingAllocator(c10::Allocator* base) : base_(base) {}

c10::DataPtr CountingAllocator::allocate(size_t n) const {
  void* data = base_->raw_allocate(n);
  const auto bytes = static_cast<int64_t>(n);
  if (data != nullptr) {
    Shard& s = shard_of(data);
    std::lock_guard<std::mutex> lock(s.mutex);
    s.sizes[data] = bytes;
  }
  total_.fetch_add(bytes, std::memory_order_relaxed);
  const int64_t now = current_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t seen = peak_.load(std::memory_order_relaxed);
  while (now > seen && !peak_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
  return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
}

void CountingAllocator::forget(void* data) {
  int64_t bytes = 0;
  {
    Shard& s = shard_of(data);
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.sizes.find(data);
    if (it == s.sizes.end()) return;  // not ours (allocated before installation): only freed below
    bytes = it->second;
    s.sizes.erase(it);
  }
  current_.fetch_sub(bytes, std::memory_order_relaxed);
}

void CountingAllocator::release(void* data) {
  CountingAllocator* self = g_installed.load(std::memory_order_acquire);
  if (data == nullptr || self == nullptr) return;
  self->forget(data);
  self->base_->raw_deleter()(data);
}

int64_t CountingAllocator::live_blocks() const {
  int64_t n = 0;
  for (auto& s : shards_) {
    std::lock_guard<std::mutex> lock(s.mutex);
    n += static_cast<int64_t>(s.sizes.size());
  }
  return n;
}

void CountingAllocator::reset_peak() { peak_.store(current_.load(std::memory_order_relaxed), std::memory_order_relaxed); }

CountingAllocator& install_counting_allocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Never destroyed: tensors may outlive static destruction and still come back to `release`.
    auto* counter = new CountingAllocator(c10::GetCPUAllocator());
    g_installed.store(counter, std::memory_order_release);
    // Priority above the default (0), so no later registration at the default level replaces it.
    c10::SetCPUAllocator(counter, /*priority=*/100);
  });
  return *g_installed.load(std::memory_order_acquire);
}

CountingAllocator* counting_allocator() { return g_installed.load(std::memory_order_acquire); }

}  // namespace trainbench::memory
