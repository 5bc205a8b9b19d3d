// Tensor memory of one device as its allocator counts it: on CPU the counting allocator
// (core/counting_allocator.h), on GPU the caching allocator's "allocated" statistics. Also what a
// memory limit sees beyond the case's start (CPU: the process's address space, which RLIMIT_AS caps;
// GPU: the caching allocator's reserved bytes).
#pragma once
#include <cstdint>
#include <string>

#include "core/device.h"

namespace trainbench::memory {

// Remembers this process's address space now, as the case's start (runner/measure.cpp calls it where
// it sets the memory limit, so that both count from the same point).
void mark_case_start();

class MemoryProbe {
 public:
  // CPU: installs the counting allocator if this process has none yet.
  explicit MemoryProbe(const DeviceSpec& device);
  std::string source() const;     // "counting allocator" | "cuda caching allocator"
  int64_t current_bytes() const;  // tensor bytes live now
  int64_t peak_bytes() const;     // tensor bytes at the peak since reset_peak()
  void reset_peak();
  // CPU: peak address space (VmPeak) minus the address space at mark_case_start() and the loader's;
  // GPU: peak reserved bytes.
  int64_t footprint_peak_bytes() const;
  // CPU: the data loader's tensor bytes at their peak since reset_peak() (counted apart from the
  // model's); GPU: 0.
  int64_t loader_peak_bytes() const;
  // CPU: the address space given to the loader above the limit (core/address_space.h); GPU: 0.
  int64_t loader_address_space_bytes() const;
  // CPU: max resident set size of the process; GPU: 0.
  int64_t max_rss_bytes() const;

 private:
  DeviceSpec device_;
};

}  // namespace trainbench::memory
