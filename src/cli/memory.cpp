// `trainbench memory`: where a training step's bytes go and, from a fit over two or three small
// batches (each its own child), the largest batch per memory size (docs/memory.md).
#include <algorithm>
#include <fstream>
#include <iostream>
#include <limits>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/options.h"
#include "memory/fit.h"
#include "results/number_format.h"
#include "results/printer_memory.h"
#include "results/journal.h"
#include "results/results_file.h"
#include "runner/child.h"
#include "runner/memory_estimate.h"
#include "runner/plan.h"
#include "runner/run_context.h"

namespace trainbench::cli {

struct MemoryOptions : SweepFlags {
  int64_t batch = 0;                      // --batch: does this batch fit each size? (0: not asked)
  std::string fits;                       // --fits 8G,16G; empty: the device's own and common sizes
  std::string measure_batches = "2,4,8";  // the batches measured for the fit
  std::string gpu_context;                // --gpu-context: outside a CUDA card's allocator (empty: the H100's)
  double within_pct = 10.0;               // --within: each held size is tried under itself to within this
  bool line_only = false;                 // --line-only: no size is tried under itself
  std::string output;
  MeasureFlags measure;
  StoreFlags store;
};
namespace {

// A /proc/meminfo line's value in bytes ("MemTotal:", "MemAvailable:"); 0 when absent.
int64_t meminfo_bytes(const std::string& wanted) {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t kb = 0;
  while (in >> key >> kb >> unit) {
    if (key == wanted) return kb * 1024;
  }
  return 0;
}

int64_t physical_memory_bytes() { return meminfo_bytes("MemTotal:"); }

// Without --memory-limit, the sizes to measure near: those of `sizes` this machine can hold while the
// case runs (three quarters of the memory available now, so that a measured batch near one cannot push
// the machine into swap). Measuring a batch near a size needs no limit, only the memory; the line
// through small batches alone was 70-85% high at 4G.
std::vector<int64_t> held_sizes(const std::vector<int64_t>& sizes) {
  const int64_t room = meminfo_bytes("MemAvailable:") / 4 * 3;
  std::vector<int64_t> held;
  for (int64_t s : sizes) {
    if (s <= room) held.push_back(s);
  }
  return held;
}

// --fits as given, else this device's own size (CPU: the --memory-limit, or physical memory) and the
// sizes of common accelerators.
std::vector<int64_t> fit_sizes(const std::string& text, const MeasureFlags& flags, bool any_cpu) {
  std::vector<int64_t> sizes;
  if (!text.empty()) {
    for (const auto& s : split_list(text, "fits")) sizes.push_back(parse_size(s, "--fits size"));
    return sizes;
  }
  if (any_cpu) {
    const int64_t own =
        flags.memory_limit.empty() ? physical_memory_bytes() : parse_size(flags.memory_limit, "memory limit");
    if (own > 0) sizes.push_back(own);
  }
  for (int g : {8, 16, 24, 40, 80}) sizes.push_back(int64_t{g} << 30);
  return sizes;
}

// A batch that ran out of memory under --memory-limit is a measurement: the fitted line (which moves in
// the heap's growth steps on a CPU) must not promise it, or a larger one, for sizes up to that limit.
void cap_by_measured_oom(MemoryEstimate& e, int64_t limit) {
  if (!e.fitted || limit <= 0 || e.oom_batches.empty()) return;
  const int64_t below = e.oom_batches.front() - 1;
  bool capped = false;
  auto cap = [&](Record& r) {
    if (!r.memory || !r.memory->fit) return;
    for (auto& p : r.memory->predictions) {
      if (p.size_bytes <= limit && p.largest_batch > below) {
        p.largest_batch = below;
        capped = true;
      }
    }
    if (capped && r.memory->assumptions.find("capped") == std::string::npos) {
      r.memory->assumptions += fmt::format(
          "; predictions for sizes up to the limit capped at batch {} (batch {} ran "
          "out of memory under it)",
          below, below + 1);
    }
  };
  for (auto& r : e.tries) cap(r);
  cap(e.summary);
}

// --measure-batches: two or three increasing batches.
std::vector<int64_t> measure_batches(const std::string& text) {
  const std::vector<int64_t> batches = parse_int_list(text, "--measure-batches");
  if (batches.size() < 2 || batches.size() > 3) throw InputError("--measure-batches: give two or three batches");
  for (size_t i = 1; i < batches.size(); ++i) {
    if (batches[i] <= batches[i - 1]) throw InputError("--measure-batches: give increasing batches, e.g. 2,4,8");
  }
  return batches;
}

// The estimate's table; without a fit, the breakdown of the largest batch that trained (it still says
// where its bytes went) and why there is no fit. False when there is none.
bool print_estimate(const MemoryEstimate& e, const Case& c) {
  if (e.fitted) {
    std::cout << print_memory(e.summary) << std::endl;
    return true;
  }
  for (auto it = e.tries.rbegin(); it != e.tries.rend(); ++it) {
    if (it->status == Status::ok && it->memory) {
      std::cout << print_memory(*it);
      break;
    }
  }
  std::cout << fmt::format("{}: no fit: {}\n", c.model, e.failure) << std::endl;
  return false;
}

}  // namespace

int cmd_memory(MemoryOptions o) {
  Sweep s = o.to_sweep();
  const std::vector<int64_t> batches = measure_batches(o.measure_batches);
  s.batches = {batches.front()};
  const std::vector<Case> plan = make_plan(s);
  bool any_cpu = false;
  for (const auto& c : plan) any_cpu = any_cpu || !c.device.is_gpu();
  const std::vector<int64_t> sizes = fit_sizes(o.fits, o.measure, any_cpu);
  int64_t gpu_context = kGpuContextBytes;
  if (!o.gpu_context.empty()) {
    if (!any_cpu) throw InputError("--gpu-context: for a CPU case (a GPU case measures its own card)");
    gpu_context = parse_size(o.gpu_context, "--gpu-context");
  }
  (void)o.measure.resolve();
  const StoreSpec store = check_store(o.store);  // refused now, not after the measuring
  Journal output_lock;                           // held until the results are written
  o.output = claim_command_output(o.output, "memory", case_input_files(plan), store, output_lock);

  ResultsFile results;
  results.context = collect_context(configure_threads(0), plan.front().device.str());
  results.context.cpu_allocator = o.measure.system_allocator ? "system" : "tuned";
  install_interrupt_handlers();
  bool interrupted = false;
  int code = kExitOk;
  const CaseChild child = o.measure.case_child();
  const int64_t limit = o.measure.memory_limit.empty() ? 0 : parse_size(o.measure.memory_limit, "memory limit");
  // A CPU case measures near the limit, or without one near each size the machine holds. A GPU case's
  // sizes are devices' memories, not this machine's: only --memory-limit is refined for there.
  const std::vector<int64_t> refine = limit > 0 ? std::vector<int64_t>{limit} : held_sizes(sizes);
  const std::vector<int64_t> gpu_refine = limit > 0 ? std::vector<int64_t>{limit} : std::vector<int64_t>{};
  for (const auto& c : plan) {
    std::cerr << "memory " << c.descriptor() << "\n";
    MemoryEstimate e = estimate_memory(
        c, batches, sizes, o.batch,
        [&](const Case& trial) {
          if (interrupted) return failed_record(trial, "interrupted");
          Record r = run_case_isolated(trial, child, &interrupted);
          std::cerr << fmt::format("  batch {:>5}: {}\n", trial.batch, to_string(r.status));
          return r;
        },
        c.device.is_gpu() ? gpu_refine : refine, std::numeric_limits<int64_t>::max(), kMemoryReach, gpu_context);
    cap_by_measured_oom(e, limit);
    if (!o.line_only && !interrupted) {
      // The sizes the device holds, each tried under itself as a memory limit: near a limit the heap
      // makes do with less slack than it takes without one (docs/memory.md), which no line sees.
      try_under_sizes(e, c, c.device.is_gpu() ? gpu_refine : refine, o.within_pct / 100.0,
                      [&](const Case& trial, int64_t size) {
                        if (interrupted) return failed_record(trial, "interrupted");
                        MeasureFlags under = o.measure;
                        under.memory_limit = std::to_string(size);
                        under.memory_limit_cpu_only = false;
                        Record r = run_case_isolated(trial, under.case_child(), &interrupted);
                        std::cerr << fmt::format("  batch {:>5} under {}: {}\n", trial.batch, format_size(size),
                                                 to_string(r.status));
                        return r;
                      });
      if (!e.try_failure.empty()) {
        std::cerr << fmt::format("memory: {}\n", e.try_failure);
        code = kExitFailure;
      }
    }
    for (const auto& r : e.tries) results.benchmarks.push_back(r);
    if (!print_estimate(e, c)) code = kExitFailure;
    if (interrupted) break;
  }
  write_results_atomic(o.output, results);
  std::cerr << fmt::format("results: {}\n", o.output);
  return keep_in_store(store, results, o.output, interrupted ? interrupt_exit_code() : code);
}

Command add_memory(CLI::App& app) {
  auto o = std::make_shared<MemoryOptions>();
  CLI::App* sub =
      app.add_subcommand("memory", "Where a training step's memory goes, and the largest batch per memory size");
  o->SweepFlags::add_to(*sub);
  sub->get_option("--model")->required();
  add_batch(*sub, o->batch, "Say whether this batch fits each size, and by how much")->check(rule(kBatchSize));
  sub->add_option("--fits", o->fits,
                  "Memory sizes to predict for, e.g. 8G,16G,24G,80G (default: this device's, 8G..80G)");
  sub->add_option("--measure-batches", o->measure_batches, "Two or three increasing batches to measure for the fit");
  add_gpu_context(*sub, o->gpu_context,
                  "A CPU case's sizes as CUDA cards: how much of a card lies outside LibTorch's allocator "
                  "(default: 693M, measured on an H100 with CUDA 13.0)");
  CLI::Option* within =
      sub->add_option("--within", o->within_pct,
                      "Try each size this machine holds under itself as a memory limit until its largest batch is "
                      "known within PCT percent (default 10; 0: exactly, as maxbatch)")
          ->check(rule(kSearchPercent));
  sub->add_flag("--line-only", o->line_only,
                "Predict every size from the fitted line alone, trying none under itself (faster, less exact)")
      ->excludes(within);
  add_output(*sub, o->output, "Results file with each measured batch (default: results/memory-<time>.json)");
  trial_defaults(o->measure);
  o->measure.add_to(*sub);
  o->store.add_to(*sub);
  return {sub, [o, sub] {
            check_limit_conflicts(o->measure);
            o->measure.place_script_check();
            return cmd_memory(*o);
          }};
}

}  // namespace trainbench::cli
