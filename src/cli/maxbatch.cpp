// `trainbench maxbatch`: the largest batch that trains, for each model/setting combination given.
// Every try is its own child process; every try is recorded in the results file.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/options.h"
#include "results/number_format.h"
#include "results/printer.h"
#include "results/journal.h"
#include "results/results_file.h"
#include "run/batch_search.h"
#include "runner/child.h"
#include "runner/maxbatch.h"
#include "runner/memory_estimate.h"
#include "runner/plan.h"
#include "runner/run_context.h"

namespace trainbench::cli {

struct MaxBatchOptions : SweepFlags {
  int64_t start = 1;
  int64_t max_batch = 65536;
  bool no_predict = false;  // --no-predict: the doubling search without a memory prediction
  std::string output;
  MeasureFlags measure;
  StoreFlags store;
};

void say_try(const Case& trial, const Record& r) {
  std::cerr << fmt::format("  try batch {:>6}: {}\n", trial.batch,
                           r.status == Status::ok
                               ? fmt::format("ok, {:.3g} {}", r.throughput, r.unit)
                               : std::string(to_string(r.status)) + (r.error.empty() ? "" : " (" + r.error + ")"));
}

void limit_cpu_search(const std::vector<Case>& plan, MeasureFlags& measure, const std::string& command) {
  if (const int64_t bytes = default_cpu_memory_limit(plan, measure); bytes > 0) {
    std::cerr << fmt::format("{}: CPU cases limited to {:.1f} GiB (90% of available memory; set --memory-limit)\n",
                             command, static_cast<double>(bytes) / (1 << 30));
  }
}

// maxbatch tries every batch on this machine: a CPU case under a limit above the memory available here
// would have its largest tries swap or wake the host's out-of-memory killer, not run out of memory
// where the limit says. `memory --size` predicts for a larger machine without trying there.
void refuse_cpu_limit_above_available(const std::vector<Case>& plan, const MeasureFlags& flags) {
  if (flags.memory_limit.empty() || flags.memory_limit_cpu_only) return;
  const bool cpu = std::any_of(plan.begin(), plan.end(), [](const Case& c) { return !c.device.is_gpu(); });
  const int64_t avail = available_memory_bytes();
  const int64_t limit = parse_size(flags.memory_limit, "--memory-limit");
  if (!cpu || avail <= 0 || limit <= avail) return;
  throw InputError(fmt::format(
      "--memory-limit {}: more than the {} of memory available on this machine, where maxbatch tries each batch "
      "of a CPU case; `trainbench memory --fits {}` predicts for a machine that large",
      flags.memory_limit, format_bytes(avail), flags.memory_limit));
}

int cmd_maxbatch(MaxBatchOptions o) {
  Sweep s = o.to_sweep();
  s.batches = {o.start};
  const std::vector<Case> plan = make_plan(s);
  if (o.max_batch < o.start) throw InputError("--max-batch must be at least --start");
  (void)o.measure.resolve();
  const StoreSpec store = check_store(o.store);  // refused now, not after the measuring
  Journal output_lock;                           // held until the results are written
  o.output = claim_command_output(o.output, "maxbatch", case_input_files(plan), store, output_lock);
  limit_cpu_search(plan, o.measure, "maxbatch");
  refuse_cpu_limit_above_available(plan, o.measure);

  ResultsFile results;
  results.context = collect_context(configure_threads(0), plan.front().device.str());
  results.context.cpu_allocator = o.measure.system_allocator ? "system" : "tuned";
  install_interrupt_handlers();
  bool interrupted = false;
  std::vector<std::string> summary;
  int code = kExitOk;
  for (const auto& c : plan) {
    std::cerr << "maxbatch " << c.descriptor() << "\n";
    int64_t predicted = 0;
    const MaxBatchResult m = o.no_predict ? search_max_batch(c, o.measure, o.start, o.max_batch, &interrupted, say_try)
                                          : search_max_batch_predicted(c, o.measure, o.start, o.max_batch, &interrupted,
                                                                       &predicted, say_try);
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
    if (predicted > 0) line += fmt::format("; predicted {}, {} tries", predicted, m.tries.size());
    summary.push_back(line);
    std::cout << line << std::endl;
    if (interrupted) break;
  }
  // An answer is about the heap it was found on: glibc's by default here, where `run` trains on its
  // tuned heap unless told otherwise (the same batch can run out of memory there under the same limit).
  const bool cpu = std::any_of(plan.begin(), plan.end(), [](const Case& c) { return !c.device.is_gpu(); });
  if (cpu && o.measure.system_allocator) {
    std::cout << "On the CPU these are batches that train on glibc's heap: train them with `trainbench run "
                 "--allocator system` (run's default, the tuned heap, may hold fewer; docs/memory.md, \"The heap a "
                 "prediction is for\")"
              << std::endl;
  }
  write_results_atomic(o.output, results);
  std::cerr << fmt::format("{} tries; results: {}\n", results.benchmarks.size(), o.output);
  return keep_in_store(store, results, o.output, interrupted ? interrupt_exit_code() : code);
}

Command add_maxbatch(CLI::App& app) {
  auto o = std::make_shared<MaxBatchOptions>();
  CLI::App* sub = app.add_subcommand("maxbatch", "Find the largest batch that trains (doubling, then bisection)");
  o->SweepFlags::add_to(*sub);
  sub->get_option("--model")->required();
  sub->add_option("--start", o->start, "First batch to try")->check(rule(kBatchSize));
  sub->add_option("--max-batch", o->max_batch, "Largest batch to try")->check(rule(kBatchSize));
  add_output(*sub, o->output, "Results file with every try (default: results/maxbatch-<time>.json)");
  trial_defaults(o->measure);
  o->measure.add_to(*sub);
  sub->add_flag("--no-predict", o->no_predict, "Search by doubling from --start, without a memory prediction first");
  o->store.add_to(*sub);
  return {sub, [o, sub] {
            check_limit_conflicts(o->measure);
            if (o->start > o->max_batch) {
              throw InputError(fmt::format("--start {} is above --max-batch {}", o->start, o->max_batch));
            }
            o->measure.place_script_check();
            return cmd_maxbatch(*o);
          }};
}

}  // namespace trainbench::cli
