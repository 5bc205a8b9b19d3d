// `trainbench peak`: the device's ceilings, stored in the peak cache for `run`, `op` and `explain`.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "ops/peak.h"
#include "results/printer_ops.h"
#include "results/results_file.h"
#include "core/value_rules.h"
#include "runner/run_context.h"

namespace trainbench::cli {

int cmd_peak(const PeakOptions& o) {
  const DeviceSpec device = resolve_device(o.device);
  PeakSettings s;
  s.device = device;
  s.precisions = checked_list(o.precisions, "precision", dtype_names());
  s.gemm_size = o.gemm_size;
  s.measure = default_peak_measure();
  if (!o.output.empty()) check_output(o.output, "-o", {}, default_store_or_none());
  const int threads = prepare_in_process(device, o.threads, true);
  Context context = collect_context(threads, device.str());
  if (o.if_missing && o.output.empty() &&
      find_cached_peak(device.str(), context.device_name, threads, context.libtorch_version)) {
    std::cerr << "peak: already measured for " << device.str() << " with " << threads << " threads ("
              << peak_cache_path() << ")\n";
    return kExitOk;
  }
  std::cerr << fmt::format("measuring the ceilings of {} ({}) with {} threads...\n", device.str(), context.device_name,
                           threads);
  const PeakInfo p = measure_peak(s, context.device_name, threads);
  std::cout << print_peak(p);
  try {
    if (store_peak(p)) {
      std::cerr << "cached in " << peak_cache_path() << " (runs on this device and thread count show % of peak)\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "trainbench: warning: " << e.what() << "\n";
  }
  if (!o.output.empty()) {
    ResultsFile f;
    context.peak = p;
    f.context = context;
    write_results_atomic(o.output, f);
    std::cerr << "results: " << o.output << "\n";
  }
  return kExitOk;
}

}  // namespace trainbench::cli
