// `trainbench explain`: measures a model's whole training step (in its own child, as `run` does), then
// times each of its layers alone, attributes the step to them and flags the slow ones.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "ops/explain.h"
#include "ops/peak.h"
#include "results/printer_ops.h"
#include "results/results_file.h"
#include "runner/child.h"
#include "runner/plan.h"

namespace trainbench::cli {

int cmd_explain(ExplainOptions o) {
  Sweep sweep;
  sweep.params = params_product(parse_sets(o.sets));
  sweep.models = sweep_models(o.model, o.script, sweep.params);
  if (sweep.params.size() != 1) throw InputError("explain takes one value per --set key (no comma lists)");
  sweep.batches = {o.batch};
  sweep.precisions = {o.precision};
  sweep.layouts = {o.layout};
  sweep.optimizers = {o.optimizer};
  if (!o.device.empty()) sweep.devices = {o.device};
  sweep.threads = {o.threads};
  if (o.data == "synthetic" && (o.loader_threads != 0 || o.data_dtype != "uint16" || o.data_transfer != "float")) {
    throw InputError("--loader-threads, --data-dtype and --data-transfer need --data (synthetic data has no loader)");
  }
  sweep.data = o.data;
  sweep.data_dtype = o.data_dtype;
  sweep.data_transfer = o.data_transfer;
  sweep.loader_threads = {o.loader_threads};
  const std::vector<Case> plan = make_plan(sweep);
  if (plan.size() != 1) throw InputError("explain takes one model, batch, precision, layout and device");
  const Case c = plan.front();
  if (o.format != "table" && o.format != "json") throw InputError("unknown format '" + o.format + "' (table or json)");
  const std::string output = o.output.empty() ? default_output_path("explain") : o.output;
  check_writable(output);
  (void)o.measure.resolve();  // bad measurement flags fail before anything runs

  ResultsFile results;
  results.context = collect_context(configure_threads(c.threads), c.device.str());
  results.context.cpu_allocator = o.measure.system_allocator ? "system" : "tuned";
  results.context.peak = find_cached_peak(c.device.str(), results.context.device_name, results.context.threads,
                                          results.context.libtorch_version);
  install_interrupt_handlers();
  bool interrupted = false;
  std::cerr << "measuring the whole step: " << c.descriptor() << "\n";
  Record step = run_case_isolated(c, o.measure.case_child(), &interrupted);
  add_percent_of_peak(step, results.context);
  results.benchmarks = {step};
  write_results_atomic(output, results);  // the step is kept even if the layers are interrupted
  if (interrupted) return interrupt_exit_code();
  if (!step.ok()) {
    std::cerr << fmt::format("trainbench: error: {}: {}{}\n", c.descriptor(), to_string(step.status),
                             step.error.empty() ? "" : " (" + step.error + ")");
    return kExitFailure;
  }

  ExplainSettings s;
  s.c = c;
  s.op_measure = default_op_measure();
  s.op_measure.min_time_s = o.op_min_time_s;
  s.peak_gflops = results.context.peak ? results.context.peak->peak_for(c.precision) : NAN;
  s.try_alternatives = !o.no_alternatives;
  // The layers are timed with the allocator setting the whole step ran with: they are compared with it.
  prepare_in_process(c.device, c.threads, !o.measure.system_allocator);
  const bool tty = isatty(STDERR_FILENO) != 0;
  results.explain = explain_case(s, step, [&](size_t i, size_t n, const std::string& what) {
    const std::string line = i < n ? fmt::format("[layer {} of {}] {}", i + 1, n, what) : "[alternative] " + what;
    std::cerr << (tty ? "\r\033[K" + line : line + "\n") << std::flush;
  });
  if (tty) std::cerr << "\r\033[K" << std::flush;
  write_results_atomic(output, results);
  std::cout << (o.format == "json" ? results_to_string(results) : print_explanation(*results.explain));
  std::cerr << "results: " << output << "\n";
  return kExitOk;
}

}  // namespace trainbench::cli
