// `trainbench peak`: the device's ceilings, stored in the peak cache for `run`, `op` and `explain`.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/options.h"
#include "ops/peak.h"
#include "results/printer_ops.h"
#include "results/results_file.h"
#include "core/value_rules.h"
#include "runner/run_context.h"

namespace trainbench::cli {

// `trainbench peak`: the device's ceilings, cached for `run` and `explain`.
struct PeakOptions : InProcessFlags {
  std::string precisions = "fp32,bf16,fp16";
  int64_t gemm_size = 0;
  std::string output;       // also write them as a results file
  bool if_missing = false;  // measure only when the cache has no entry for this device and thread count
};

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

Command add_peak(CLI::App& app) {
  auto o = std::make_shared<PeakOptions>();
  CLI::App* sub = app.add_subcommand("peak", "Measure the device's GEMM, memory-copy and convolution ceilings");
  o->InProcessFlags::add_to(*sub);
  add_precision(*sub, o->precisions, Many::list, PrecisionSet::compute_types);
  sub->add_option("--gemm-size", o->gemm_size, "M = N = K of the GEMMs (default 2048 on CPU, 8192 on GPUs)")
      ->check(rule(kGemmSize));
  add_output(*sub, o->output, "Also write the ceilings as a results file");
  sub->add_flag("--if-missing", o->if_missing,
                "Measure only when the cache has no entry for this device, thread count and LibTorch (make run)");
  return {sub, [o] { return cmd_peak(*o); }};
}

}  // namespace trainbench::cli
