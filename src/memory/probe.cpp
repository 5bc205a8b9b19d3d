#include "memory/probe.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>

#include "memory/counting_allocator.h"

namespace trainbench::memory {
namespace {

std::atomic<int64_t> g_case_start_address_space{-1};

int64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  statm >> pages;
  return pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

// VmPeak: the largest the address space has been, which is what RLIMIT_AS refuses to exceed.
int64_t peak_address_space_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmPeak:") {
      int64_t kb = 0;
      status >> kb;
      return kb * 1024;
    }
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace

void mark_case_start() { g_case_start_address_space.store(address_space_bytes()); }

MemoryProbe::MemoryProbe(const DeviceSpec& device) : device_(device) {
  if (!device_.is_gpu()) install_counting_allocator();
  if (g_case_start_address_space.load() < 0) mark_case_start();
}

std::string MemoryProbe::source() const { return device_.is_gpu() ? "cuda caching allocator" : "counting allocator"; }

int64_t MemoryProbe::current_bytes() const {
  if (device_.kind().allocator_stats != nullptr) return allocated_bytes(device_);  // a GPU's caching allocator
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
  return peak_address_space_bytes() - g_case_start_address_space.load();
}

int64_t MemoryProbe::max_rss_bytes() const {
  if (device_.is_gpu()) return 0;
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

}  // namespace trainbench::memory
