#include "core/counting_allocator.h"

#include <c10/core/CPUAllocator.h>

#include <mutex>
#include <new>

namespace trainbench::memory {
namespace {

std::atomic<CountingAllocator*> g_installed{nullptr};
thread_local MemoryOwner t_owner = MemoryOwner::model;

// The header: the block's size, then its owner (read and swapped atomically by a hand-over).
int64_t& size_of(char* block) { return *reinterpret_cast<int64_t*>(block); }
std::atomic<int64_t>& owner_of(char* block) { return *reinterpret_cast<std::atomic<int64_t>*>(block + 8); }
static_assert(sizeof(std::atomic<int64_t>) == 8, "the header holds the owner in 8 bytes");

void raise_to(std::atomic<int64_t>& peak, int64_t now) {
  int64_t seen = peak.load(std::memory_order_relaxed);
  while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {}
}

}  // namespace

MemoryOwner thread_memory_owner() { return t_owner; }
ScopedMemoryOwner::ScopedMemoryOwner(MemoryOwner owner) : previous_(t_owner) { t_owner = owner; }
ScopedMemoryOwner::~ScopedMemoryOwner() { t_owner = previous_; }

CountingAllocator::CountingAllocator(c10::Allocator* base) : base_(base) {}

c10::DataPtr CountingAllocator::allocate(size_t n) TRAINBENCH_ALLOCATE_CONST {
  if (n == 0) return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
  char* block = static_cast<char*>(base_->raw_allocate(n + kHeader));  // throws when out of memory
  const auto bytes = static_cast<int64_t>(n);
  const MemoryOwner owner = t_owner;
  size_of(block) = bytes;
  new (&owner_of(block)) std::atomic<int64_t>(static_cast<int64_t>(owner));
  char* data = block + kHeader;
  blocks_.fetch_add(1, std::memory_order_relaxed);
  total_.fetch_add(bytes, std::memory_order_relaxed);
  if (owner == MemoryOwner::loader) {
    raise_to(loader_peak_, loader_current_.fetch_add(bytes, std::memory_order_relaxed) + bytes);
  } else {
    add_model_bytes(bytes);
  }
  return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
}

void CountingAllocator::add_model_bytes(int64_t bytes) const {
  raise_to(peak_, current_.fetch_add(bytes, std::memory_order_relaxed) + bytes);
}

int64_t CountingAllocator::hand_over_to_model(const c10::DataPtr& p) {
  if (p.get() == nullptr || p.get_deleter() != &release || p.get_context() != p.get()) return 0;
  char* block = static_cast<char*>(p.get()) - kHeader;
  const auto loader = static_cast<int64_t>(MemoryOwner::loader), model = static_cast<int64_t>(MemoryOwner::model);
  int64_t expected = loader;
  if (!owner_of(block).compare_exchange_strong(expected, model, std::memory_order_relaxed)) return 0;
  const int64_t bytes = size_of(block);
  loader_current_.fetch_sub(bytes, std::memory_order_relaxed);
  add_model_bytes(bytes);
  return bytes;
}

void CountingAllocator::release(void* data) {
  CountingAllocator* self = g_installed.load(std::memory_order_acquire);
  if (data == nullptr || self == nullptr) return;
  char* block = static_cast<char*>(data) - kHeader;
  const bool loaders = owner_of(block).load(std::memory_order_relaxed) == static_cast<int64_t>(MemoryOwner::loader);
  (loaders ? self->loader_current_ : self->current_).fetch_sub(size_of(block), std::memory_order_relaxed);
  self->blocks_.fetch_sub(1, std::memory_order_relaxed);
  self->base_->raw_deleter()(block);
}

void CountingAllocator::reset_peak() {
  peak_.store(current_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  loader_peak_.store(loader_current_.load(std::memory_order_relaxed), std::memory_order_relaxed);
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
