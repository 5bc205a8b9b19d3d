// A device's ceilings measured with LibTorch ops (`trainbench peak`): large square GEMMs per
// precision, a large copy (memory bandwidth) and a 3x3 convolution. Cached per device so that runs
// can show each case's achieved GFLOP/s as a percentage of the measured peak.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/precision.h"
#include "core/stopping.h"
#include "results/context.h"
#include "results/op_record.h"
#include "results/record.h"

namespace trainbench {

struct PeakSettings {
  DeviceSpec device;
  std::vector<std::string> precisions = dtype_names();
  int64_t gemm_size = 0;    // 0: by device (2048 on CPU, 8192 on GPUs)
  int64_t copy_bytes = 0;   // 0: by device (256 MiB on CPU, 2 GiB on GPUs)
  MeasureSettings measure;  // per measurement
};

MeasureSettings default_peak_measure();

// Measures every ceiling; a precision the device cannot multiply in goes to gemm_unsupported with
// the reason. `device_name` and `threads` are recorded as given (they key the cache).
PeakInfo measure_peak(const PeakSettings& s, const std::string& device_name, int threads);

// The cache file: $TRAINBENCH_CACHE_DIR/peak.json, else $XDG_CACHE_HOME/trainbench/peak.json, else
// $HOME/.cache/trainbench/peak.json. Empty when none of them is set: the cache is then not used at all
// (never a shared place such as /tmp, where another user could plant one), and that is said once on
// stderr.
std::string peak_cache_path();

// The cached entry for this device, device name, thread count and LibTorch version, if any. A missing
// or unreadable cache is no entry: a run never fails over its cache. A cache file not owned by this
// user is ignored (said once on stderr).
std::optional<PeakInfo> find_cached_peak(const std::string& device, const std::string& device_name, int threads,
                                         const std::string& libtorch_version);

// The cached peak for `r`'s device, thread count and precision (times the ranks of a data-parallel
// record, whose FLOP/s are the job's), as a percentage of it in r.percent_of_peak, and MFU / HFU over
// it; left NaN when none is cached.
void add_percent_of_peak(Record& r, const Context& context);

// Adds or replaces the entry with the same key; false (and nothing written) when there is no cache
// place (peak_cache_path() empty). Throws std::runtime_error when the cache cannot be written.
bool store_peak(const PeakInfo& p);

}  // namespace trainbench
