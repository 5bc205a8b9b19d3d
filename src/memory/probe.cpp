#include "memory/probe.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "core/address_space.h"
#include "core/counting_allocator.h"

namespace trainbench::memory {
namespace {

std::atomic<int64_t> g_case_start_address_space{-1};

}  // namespace

void mark_case_start() { g_case_start_address_space.store(address_space_bytes()); }

MemoryProbe::MemoryProbe(const DeviceSpec& device) : device_(device) {
  if (!device_.is_gpu()) install_counting_allocator();
  if (g_case_start_address_space.load() < 0) mark_case_start();
}

std::string MemoryProbe::source() const { return device_.is_gpu() ? "cuda caching allocator" : "counting allocator"; }

int64_t MemoryProbe::current_bytes() const {
  if (device_kind(device_).allocator_stats != nullptr) return allocated_bytes(device_);  // a GPU's caching allocator
  return counting_allocator()->current_bytes();
}

int64_t MemoryProbe::peak_bytes() const {
  if (device_.is_gpu()) return peak_memory_bytes(device_);
  return counting_allocator()->peak_bytes();
}

void MemoryProbe::reset_peak() {
  if (device_.is_gpu()) {
    reset_peak_memory(device_);
  } else {
    counting_allocator()->reset_peak();
  }
}

int64_t MemoryProbe::footprint_peak_bytes() const {
  if (device_.is_gpu()) return peak_reserved_bytes(device_);
  return std::max<int64_t>(0, peak_address_space_bytes() - g_case_start_address_space.load() - loader_address_space_bytes());
}

int64_t MemoryProbe::loader_peak_bytes() const {
  return device_.is_gpu() ? 0 : counting_allocator()->loader_peak_bytes();
}

int64_t MemoryProbe::loader_address_space_bytes() const { return device_.is_gpu() ? 0 : loader_room_bytes(); }

int64_t MemoryProbe::max_rss_bytes() const {
  if (device_.is_gpu()) return 0;
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

}  // namespace trainbench::memory
