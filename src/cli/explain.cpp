// `trainbench explain`: measures a model's whole training step (in its own child, as `run` does), then
// times each of its layers alone (in a second child, `explain-layers`), attributes the step to them and
// flags the slow ones. Neither the model's code nor its layers run in this process.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "workloads/script.h"
#include "cli/options.h"
#include "core/subprocess.h"
#include "ops/explain.h"
#include "ops/peak.h"
#include "results/printer_ops.h"
#include "results/journal.h"
#include "results/results_file.h"
#include "run/case_entry.h"
#include "runner/child.h"
#include "runner/measure.h"
#include "runner/plan.h"
#include "runner/run_context.h"

namespace trainbench::cli {

// `trainbench explain`: a model's step broken into its layers. With real input (--data) the whole step
// is measured with its loader; data wait and copy become rows.
struct ExplainOptions : InProcessFlags, InputDataFlags {
  std::string model, precision = "fp32", layout = "nchw", optimizer = "sgd";
  int64_t batch = 0;
  std::vector<std::string> sets;
  double op_min_time_s = 0.2;  // per phase of each layer
  int loader_threads = 0;
  bool no_alternatives = false;
  std::string output;
  std::string format = "table";
  MeasureFlags measure;  // the whole step
  ScriptFlags script;    // --input, --target: --model names a TorchScript file
};

// Hidden `explain-layers FILE`: the child side of explain. FILE is explain's results file holding the
// whole step's record (its name is the case's descriptor) and the context's cached peak; the layers'
// Explanation goes to --result-fd as JSON. Runs under the case's measurement flags (threads, allocator,
// --memory-limit) as the step's child did.
struct ExplainLayersOptions {
  std::string from;
  double op_min_time_s = 0.2;
  bool no_alternatives = false;
  int result_fd = 3;
  MeasureFlags measure;
};

namespace {

bool is_progress(const std::string& line) { return line.rfind("[layer ", 0) == 0 || line.rfind("[alternative] ", 0) == 0; }

// The layers of case `c`, timed by `explain-layers` on the step kept in `results_path`, under the
// step's --timeout and measurement flags. Its progress lines are shown as they come (on a terminal, one
// line rewritten); anything else it says passes through, but its own error line, which the error
// thrown here repeats. Sets *interrupted (and returns nothing) on Ctrl-C.
Explanation explain_in_child(const Case& c, const std::string& results_path, const ExplainOptions& o, bool* interrupted) {
  SpawnSpec spec;
  spec.args = {self_executable(), "explain-layers", results_path, "--op-time", fmt::format("{}", o.op_min_time_s)};
  if (o.no_alternatives) spec.args.push_back("--no-alternatives");
  for (const std::string& a : o.measure.child_args()) spec.args.push_back(a);
  const bool tty = isatty(STDERR_FILENO) != 0;
  std::string pending;
  const auto show = [&](const std::string& bytes) {
    pending += bytes;
    for (size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (is_progress(line)) {
        std::cerr << (tty ? "\r\033[K" + line : line + "\n") << std::flush;
      } else if (line.rfind("trainbench: error: ", 0) != 0) {
        std::cerr << (tty ? "\r\033[K" : "") << line << "\n" << std::flush;
      }
    }
  };
  const Captured done = run_captured(spec, o.measure.timeout_s, [](pid_t) { return interrupt_requested(); }, show);
  if (tty) std::cerr << "\r\033[K" << std::flush;
  if (interrupt_requested()) {
    *interrupted = true;
    return {};
  }
  const std::string what = c.descriptor() + ": timing its layers";
  if (done.timed_out) {
    throw std::runtime_error(fmt::format("{} did not end within {} s (--timeout)", what, o.measure.timeout_s));
  }
  if (!done.result.empty()) {
    try {
      return explanation_from_json(nlohmann::json::parse(done.result));
    } catch (const std::exception& e) {
      throw std::runtime_error(what + ": unreadable result (" + first_line(e.what()) + ")");
    }
  }
  std::string said = last_nonempty_line(done.err);
  if (said.rfind("trainbench: error: ", 0) == 0) said = said.substr(19);
  const std::string how = WIFSIGNALED(done.status) ? "crashed with " + signal_name(WTERMSIG(done.status))
                                                   : "exited with code " + std::to_string(WEXITSTATUS(done.status));
  throw std::runtime_error(what + " " + how + (said.empty() ? "" : ": " + said));
}

// A results file in a private temporary folder (mkdtemp: mode 0700), removed with the folder.
struct HandedStep {
  explicit HandedStep(const ResultsFile& f) {
    std::string pattern = (std::filesystem::temp_directory_path() / "trainbench-explain.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot make a private folder for the layers' child: " +
                               std::string(std::strerror(errno)));
    }
    dir = pattern;
    file = dir + "/step.json";
    write_results_atomic(file, f);
  }
  ~HandedStep() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  HandedStep(const HandedStep&) = delete;
  HandedStep& operator=(const HandedStep&) = delete;
  std::string dir, file;
};

}  // namespace

int cmd_explain_layers(const ExplainLayersOptions& o) {
  const ResultsFile from = read_results(o.from);
  if (from.benchmarks.size() != 1) throw InputError(o.from + ": explain-layers needs the one record of a whole step");
  const Record& step = from.benchmarks.front();
  const Case c = child_case(step.name);
  // Threads, allocator and memory limit as the whole step's child had them: the layers are compared with it.
  prepare_child_process(c, o.measure.resolve());
  ExplainSettings s;
  s.c = c;
  s.op_measure = default_op_measure();
  s.op_measure.min_time_s = o.op_min_time_s;
  s.peak_gflops = from.context.peak ? from.context.peak->peak_for(c.precision.str(), step.tf32) : NAN;
  s.try_alternatives = !o.no_alternatives;
  const Explanation e = explain_case(s, step, [](size_t i, size_t n, const std::string& what) {
    std::cerr << (i < n ? fmt::format("[layer {} of {}] {}", i + 1, n, what) : "[alternative] " + what) << "\n"
              << std::flush;
  });
  return detail::write_all_and_sync(o.result_fd, to_json(e).dump() + "\n") ? kExitOk : kExitFailure;
}

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
  Journal output_lock;  // held until the results are written
  const std::string output =
      claim_command_output(o.output, "explain", case_input_files(plan), default_store_or_none(), output_lock);
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

  // The layers' child is handed the step in a file of its own, in a folder only this user can enter,
  // never told to re-read -o (another process could change it meanwhile: a convnet step was once given
  // mobilenet_v1's layers that way).
  const HandedStep handed(results);
  results.explain = explain_in_child(c, handed.file, o, &interrupted);
  if (interrupted) return interrupt_exit_code();
  write_results_atomic(output, results);
  std::cout << (o.format == "json" ? results_to_string(results) : print_explanation(*results.explain));
  std::cerr << "results: " << output << "\n";
  return kExitOk;
}

Command add_explain(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  CLI::App* sub = app.add_subcommand("explain", "Break a model's training step into its layers and flag slow ones");
  add_model(*sub, o->model, Many::one)->required();
  add_batch(*sub, o->batch, "Batch size")->required()->check(rule(kBatchSize));
  o->script.add_to(*sub);
  add_set(*sub, o->sets, Many::one);
  o->InProcessFlags::add_to(*sub);
  add_precision(*sub, o->precision, Many::one);
  add_layout(*sub, o->layout, Many::one);
  add_optimizer(*sub, o->optimizer, Many::one);
  add_op_time(*sub, o->op_min_time_s, "Seconds to measure each phase of each layer at least");
  add_no_alternatives(*sub, o->no_alternatives, "Do not time flagged layers in the other layout and precision");
  o->InputDataFlags::add_to(*sub);
  add_loader_threads(*sub, o->loader_threads, "Loader threads for --data (0: the default)")->check(rule(kThreadCount));
  add_output(*sub, o->output, "Results file (default: results/explain-<time>.json)");
  add_format(*sub, o->format, "table or json");
  o->measure.add_to(*sub);
  return {sub, [o, sub] {
            check_limit_conflicts(o->measure);
            o->measure.place_script_check();
            return cmd_explain(*o);
          }};
}

Command add_explain_layers(CLI::App& app) {
  auto o = std::make_shared<ExplainLayersOptions>();
  CLI::App* sub = app.add_subcommand("explain-layers", "Internal: time explain's layers in this process");
  sub->group("");  // hidden from --help
  sub->add_option("from", o->from)->required();
  add_op_time(*sub, o->op_min_time_s, "");
  add_no_alternatives(*sub, o->no_alternatives, "");
  add_result_fd(*sub, o->result_fd);
  o->measure.add_to(*sub);
  return {sub, [o] {
            ScriptCheckPlace place;  // this process is the census's own: it checks a TorchScript file as it builds it
            place.kind = ScriptCheckPlace::Kind::case_setup;
            set_script_check_place(place);
            return cmd_explain_layers(*o);
          }};
}

}  // namespace trainbench::cli
