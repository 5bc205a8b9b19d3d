// `trainbench maxbatch`: the largest batch that trains, for each model/setting combination given.
// Every try is its own child process; every try is recorded in the results file.
#include <unistd.h>

#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "results/printer.h"
#include "results/results_file.h"
#include "runner/child.h"
#include "runner/maxbatch.h"
#include "runner/plan.h"

namespace trainbench::cli {
namespace {

int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

}  // namespace

MaxBatchResult search_max_batch(const Case& c, const MeasureFlags& flags, int64_t start, int64_t max_batch,
                                bool* interrupted) {
  const std::vector<std::string> child_flags = flags.child_args();
  return find_max_batch(c, start, max_batch, [&](const Case& trial) {
    if (*interrupted) return failed_record(trial, "interrupted");
    Record r = run_case_isolated(trial, child_flags, flags.timeout_s, !flags.memory_limit.empty(), interrupted);
    std::cerr << fmt::format("  try batch {:>6}: {}\n", trial.batch,
                             r.status == Status::ok ? fmt::format("ok, {:.3g} {}", r.throughput, r.unit)
                                                    : std::string(to_string(r.status)) + (r.error.empty() ? "" : " (" + r.error + ")"));
    return r;
  });
}

void default_cpu_memory_limit(const std::vector<Case>& plan, MeasureFlags& flags) {
  if (!flags.memory_limit.empty()) return;
  for (const auto& c : plan) {
    if (!c.device.is_gpu()) {
      const int64_t avail = available_memory_bytes() * 9 / 10;
      if (avail > 0) {
        flags.memory_limit = std::to_string(avail);
        std::cerr << fmt::format("maxbatch: CPU cases limited to {:.1f} GiB (90% of available memory; set --memory-limit)\n",
                                 static_cast<double>(avail) / (1 << 30));
      }
      return;
    }
  }
}

int cmd_maxbatch(MaxBatchOptions o) {
  Sweep s;
  s.models = split_list(o.models, "model");
  s.params = params_product(parse_sets(o.sets));
  s.batches = {o.start};
  s.precisions = split_list(o.precisions, "precision");
  s.layouts = split_list(o.layouts, "layout");
  s.optimizers = split_list(o.optimizers, "optimizer");
  if (!o.devices.empty()) s.devices = split_list(o.devices, "device");
  s.forward_only = o.forward_only;
  const std::vector<Case> plan = make_plan(s);
  if (o.max_batch < o.start) throw InputError("--max-batch must be at least --start");
  (void)o.measure.resolve();
  if (o.output.empty()) o.output = default_output_path("maxbatch");
  check_writable(o.output);
  default_cpu_memory_limit(plan, o.measure);

  ResultsFile results;
  results.context = collect_context(configure_threads(0), plan.front().device.str());
  results.context.cpu_allocator = o.measure.system_allocator ? "system" : "tuned";
  install_interrupt_handlers();
  bool interrupted = false;
  std::vector<std::string> summary;
  int code = kExitOk;
  for (const auto& c : plan) {
    std::cerr << "maxbatch " << c.descriptor() << "\n";
    const MaxBatchResult m = search_max_batch(c, o.measure, o.start, o.max_batch, &interrupted);
    for (const auto& r : m.tries) results.benchmarks.push_back(r);
    std::string line;
    if (!m.failure.empty()) {
      line = fmt::format("{}: search stopped: {}", c.model, m.failure);
      code = kExitFailure;
    } else if (m.largest == 0) {
      line = fmt::format("{}: not even batch {} fits", c.model, o.start);
    } else {
      line = fmt::format("{}: largest batch that trains: {}{} ({:.3g} {}) [{}]", c.model, m.largest,
                         m.hit_limit ? " (the --max-batch limit; larger may fit)" : "", m.best.throughput, m.best.unit,
                         m.best.name);
    }
    summary.push_back(line);
    std::cout << line << std::endl;
    if (interrupted) break;
  }
  write_results_atomic(o.output, results);
  std::cerr << fmt::format("{} tries; results: {}\n", results.benchmarks.size(), o.output);
  return interrupted ? 130 : code;
}

}  // namespace trainbench::cli
