#include "memory/counting_allocator.h"

#include <c10/core/CPUAllocator.h>

#include <mutex>

namespace trainbench::memory {
namespace {

std::atomic<CountingAllocator*> g_installed{nullptr};

}  // namespace

CountingAllocator::CountingAllocator(c10::Allocator* base) : base_(base) {}

c10::DataPtr CountingAllocator::allocate(size_t n) TRAINBENCH_ALLOCATE_CONST {
  if (n == 0) return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
  char* block = static_cast<char*>(base_->raw_allocate(n + kHeader));  // throws when out of memory
  const auto bytes = static_cast<int64_t>(n);
  *reinterpret_cast<int64_t*>(block) = bytes;
  char* data = block + kHeader;
  blocks_.fetch_add(1, std::memory_order_relaxed);
  total_.fetch_add(bytes, std::memory_order_relaxed);
  const int64_t now = current_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t seen = peak_.load(std::memory_order_relaxed);
  while (now > seen && !peak_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {}
  return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
}

void CountingAllocator::release(void* data) {
  CountingAllocator* self = g_installed.load(std::memory_order_acquire);
  if (data == nullptr || self == nullptr) return;
  char* block = static_cast<char*>(data) - kHeader;
  self->current_.fetch_sub(*reinterpret_cast<const int64_t*>(block), std::memory_order_relaxed);
  self->blocks_.fetch_sub(1, std::memory_order_relaxed);
  self->base_->raw_deleter()(block);
}

void CountingAllocator::reset_peak() {
  peak_.store(current_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

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
