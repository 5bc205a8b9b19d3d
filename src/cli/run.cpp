// `trainbench run`: plan the cases, run each in a child process, journal every record at once,
// print rows live with progress, and write the results file atomically at the end. The steps after the
// plan are in run_steps.cpp.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "workloads/script.h"
#include "core/input_file.h"
#include "cli/options.h"
#include "ops/peak.h"
#include "report/html_report.h"
#include "results/journal.h"
#include "cli/run_console.h"
#include "results/results_file.h"
#include "runner/child.h"
#include "runner/plan.h"
#include "runner/suite.h"

namespace trainbench::cli {
namespace fs = std::filesystem;
std::string default_output_path(const std::string& kind, int k) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::gmtime(&now));
  return "results/" + kind + "-" + stamp + (k > 1 ? "-" + std::to_string(k) : "") + ".json";
}

namespace {

// Locks `output`'s journal path; false when another process holds it and `may_pass` (a default name:
// the next one is tried), else that is one line (InputError).
bool try_lock_output(const std::string& output, Journal& lock, bool may_pass) {
  try {
    lock.lock(journal_path_for(output));
    return true;
  } catch (const JournalBusy& e) {
    if (may_pass) return false;
    throw InputError(e.what());
  } catch (const ResultsError& e) {
    throw InputError("cannot write -o '" + output + "': " + e.what());
  }
}

// A default name not taken: neither its file nor its journal exists. (k bounds the tries: a thousand
// runs started in one second.)
bool default_name_taken(const std::string& output) {
  std::error_code ec;
  return fs::exists(output, ec) || fs::exists(journal_path_for(output), ec);
}

}  // namespace

std::string lock_output(const std::string& given, const std::string& kind, Journal& lock) {
  if (!given.empty()) {
    (void)try_lock_output(given, lock, false);
    return given;
  }
  for (int k = 1; k <= 1000; ++k) {
    const std::string output = default_output_path(kind, k);
    if (default_name_taken(output)) continue;
    check_writable(output, "-o");
    if (try_lock_output(output, lock, true)) return output;
  }
  throw InputError("no free default name for this second's " + kind + " results: give -o");
}

std::string claim_command_output(const std::string& given, const std::string& kind,
                                 const std::vector<std::string>& inputs, const StoreSpec& store, Journal& lock) {
  if (!given.empty()) check_output(given, "-o", inputs, store);  // before its lock makes a file beside it
  const std::string output = lock_output(given, kind, lock);
  if (given.empty()) check_output(output, "-o", inputs, store);
  return output;
}

std::vector<std::string> case_input_files(const std::vector<Case>& plan) {
  std::vector<std::string> files;
  for (const Case& c : plan) {
    if (const auto f = c.params.find("file"); f != c.params.end()) files.push_back(f->second);  // TorchScript
    if (!c.synthetic_data()) files.push_back(c.data);
  }
  return files;
}

namespace {

// What --resume compares: the cases and the settings every case is measured with.
PlanIdentity plan_identity(const std::vector<Case>& plan, const MeasureFlags& m) {
  PlanIdentity id;
  for (const auto& c : plan) id.cases.push_back(c.descriptor());
  const std::vector<std::string> args = m.child_args();
  for (size_t i = 0; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0;
    id.settings[args[i]] = has_value ? args[i + 1] : "on";
    if (has_value) ++i;
  }
  id.settings["--timeout"] = fmt::format("{}", m.timeout_s);
  return id;
}

// Which settings flags were given on the command line: they apply to a suite's groups too.
struct GivenFlags {
  bool precision = false, layout = false, optimizer = false, threads = false, forward_only = false;
  bool data = false;  // --data (with --loader-threads, --data-dtype)
};

std::vector<int> thread_list(const std::string& text) {
  std::vector<int> out;
  for (const auto& t : split_list(text, "threads"))
    out.push_back(static_cast<int>(checked_number(t, kThreadCount, "--threads")));
  return out;
}

// --data and its companions, from the flags, on a sweep.
void use_data_flags(Sweep& s, const RunOptions& o) {
  s.data = o.data;
  s.data_dtype = o.data_dtype;
  s.data_transfer = o.data_transfer;
  s.loader_threads = loader_thread_list(o.loader_threads, true);
}

// --batch: sizes, or `auto` alone (the search starts at 1); empty when not given.
std::vector<int64_t> batch_list(const std::string& batches) {
  if (batches.empty()) return {};
  if (batches == "auto") return {1};
  for (const auto& b : split_list(batches, "batch size")) {
    if (b == "auto") throw InputError("--batch '" + batches + "': auto cannot be combined with sizes; give auto alone");
  }
  return parse_int_list(batches, "batch size");
}

// The suite's groups, each with the settings flags given beside --suite replacing the group's value
// (and its per-device ones).
void add_suite_cases(const RunOptions& o, const Suite& suite, const GivenFlags& given, std::vector<Case>& plan) {
  for (const auto& g : suite.groups) {
    Sweep s = g;
    if (!o.devices.empty() && s.devices.empty()) s.devices = split_list(o.devices, "device");
    if (given.precision) s.precisions = split_list(o.precisions, "precision");
    if (given.layout) s.layouts = split_list(o.layouts, "layout");
    if (given.optimizer) s.optimizers = split_list(o.optimizers, "optimizer");
    if (given.threads) s.threads = thread_list(o.threads);
    if (given.forward_only) s.forward_only = true;
    if (given.data) use_data_flags(s, o);
    for (auto& [device, over] : s.per_device) {
      if (given.precision) over.precisions.reset();
      if (given.layout) over.layouts.reset();
      if (given.optimizer) over.optimizers.reset();
      if (given.threads) over.threads.reset();
    }
    for (auto& c : make_plan(s)) {
      c.search_batch = searches_batch(s, c.device.type);
      plan.push_back(std::move(c));
    }
  }
}

std::vector<Case> plan_from(const RunOptions& o, const Suite* suite, const GivenFlags& given) {
  std::vector<Case> plan;
  for (const auto& d : o.cases) {
    try {
      Case c = parse_case(d);
      validate_case(c);
      plan.push_back(c);
    } catch (const DescriptorError& e) {
      throw InputError(e.what());
    }
  }
  if (suite != nullptr) add_suite_cases(o, *suite, given, plan);
  if (!o.sets.empty() && o.models.empty()) throw InputError("--set needs --model (it sets that workload's parameters)");
  if (o.script.given() && o.models.empty())
    throw InputError("--input and --target need --model FILE.pt (a TorchScript file)");
  if (!o.models.empty() || !o.batches.empty()) {
    Sweep s = o.to_sweep();  // models (none: make_plan says so), parameters, precisions, layouts, ...
    s.batches = batch_list(o.batches);
    s.threads = thread_list(o.threads);
    use_data_flags(s, o);
    for (auto& c : make_plan(s)) {
      c.search_batch = o.batches == "auto";
      plan.push_back(std::move(c));
    }
  }
  if (plan.empty()) throw InputError("nothing to run: give --model and --batch, --suite NAME, or --case DESCRIPTOR");
  // The same case twice would measure twice and collide in the journal: kept once, its batch searched
  // when either asked for it.
  std::map<std::string, size_t> seen;
  std::vector<Case> unique;
  for (auto& c : plan) {
    const auto [it, fresh] = seen.emplace(c.descriptor(), unique.size());
    if (fresh) {
      unique.push_back(std::move(c));
    } else {
      unique[it->second].search_batch = unique[it->second].search_batch || c.search_batch;
    }
  }
  return unique;
}

// Flags that shape cases. A --case descriptor sets every one itself, so with --case (and no --model
// sweep for them to shape) they are refused rather than ignored. With --suite, --precision, --layout,
// --optimizer, --threads, --forward-only and --device apply to the suite's groups (plan_from); --batch
// and --set are the suite's own axes and are refused.
GivenFlags check_sweep_flags(const RunOptions& o, const CLI::App& sub) {
  auto given = [&](const char* flag) { return sub.count(flag) > 0; };
  if (o.models.empty() && !o.cases.empty() && o.suite.empty()) {
    for (const char* flag : {"--batch", "--precision", "--layout", "--optimizer", "--threads", "--set",
                             "--forward-only", "--data", "--loader-threads", "--data-dtype", "--data-transfer"}) {
      if (given(flag)) {
        throw InputError(std::string(flag) +
                         " does not apply to --case cases (the descriptor sets it, e.g. :t4: for "
                         "threads); it shapes a --model sweep");
      }
    }
    if (given("--device"))
      throw InputError("--device does not apply to --case cases: the device is the descriptor's last field");
  }
  if (o.models.empty() && !o.suite.empty()) {
    for (const char* flag : {"--batch", "--set"}) {
      if (given(flag)) {
        throw InputError(std::string(flag) +
                         " does not apply to --suite cases: the suite's groups set it (edit the suite "
                         "file, or give --model for a sweep of its own)");
      }
    }
  }
  GivenFlags g;
  if (!o.suite.empty()) {
    g.precision = given("--precision");
    g.layout = given("--layout");
    g.optimizer = given("--optimizer");
    g.threads = given("--threads");
    g.forward_only = given("--forward-only");
    g.data = given("--data");
  }
  for (const char* flag : {"--loader-threads", "--data-dtype", "--data-transfer"}) {
    if (!given("--data") && given(flag))
      throw InputError(std::string(flag) + " needs --data (synthetic data has no loader)");
  }
  return g;
}

// A suite's settings apply unless the flag was given on the command line. `m.given` learns which values
// the suite set, for the conflict check.
void apply_suite_settings(const SuiteSettings& s, const CLI::App& sub, MeasureFlags& m) {
  auto given = [&](const char* flag) { return sub.count(flag) > 0; };
  for (const auto& [name, value] : s.stopping) {
    if (m.given.count(name)) continue;  // its flag, on the command line
    stop_setting(name).set(m.stop, value);
    m.given[name] = s.origin.count(name) ? s.origin.at(name) : name;
  }
  if (s.timeout && !given("--timeout")) m.timeout_s = *s.timeout;
  if (s.memory_limit && !given("--memory-limit")) {
    m.memory_limit = *s.memory_limit;
    m.memory_limit_cpu_only = true;
  }
  if (s.max_image_pixels && !given("--max-image-pixels")) m.max_image_pixels = *s.max_image_pixels;
}

// Plan: the flags' and the suite's settings checked, the output format found, the cases listed.
RunPlan plan_run(RunOptions& o, const CLI::App& sub) {
  const GivenFlags given = check_sweep_flags(o, sub);
  std::unique_ptr<Suite> suite;
  o.measure.place_script_check();
  if (!o.suite.empty()) {
    suite = std::make_unique<Suite>(load_suite(o.suite));
    apply_suite_settings(suite->settings, sub, o.measure);
    o.measure.place_script_check();  // the suite's timeout and memory limit, for the cases it adds
  }
  check_limit_conflicts(o.measure);
  RunPlan plan;
  try {
    plan.format = &find_reporter(o.format);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  (void)o.measure.resolve();  // rejects a bad --memory-limit before anything runs
  if (o.resume && o.output.empty()) throw InputError("--resume needs -o FILE: the results file of the run to resume");
  plan.cases = plan_from(o, suite.get(), given);
  plan.inputs = case_input_files(plan.cases);
  if (suite) plan.inputs.push_back(suite->path);
  if (plan.searches_batch()) limit_cpu_search(plan.cases, o.measure, "run");
  if (o.dist.enabled) {
    if (o.resume) throw InputError("--resume does not work with --dist yet: run the remaining cases with --case");
    if (plan.searches_batch())
      throw InputError("--batch auto does not work with --dist: give the batch of each rank");
    plan.dist = std::make_unique<DistRun>(o.dist);
  }
  return plan;
}

// Where the results go, checked before anything runs; takes the run's lock (the journal), held until
// the results file is written, so a second run on the same -o stops here. Returns the journal's path.
std::string claim_output(RunOptions& o, const std::vector<std::string>& inputs, Journal& journal) {
  if (o.force && !o.resume) throw InputError("--force only goes with --resume");
  // No -o: the first free default name of this second, locked at once (runs started together each get
  // their own); the checks below then hold for it too.
  const bool named = !o.output.empty();
  if (!named) o.output = lock_output("", "trainbench", journal);
  const StoreSpec store = o.store.spec();
  check_output(o.output, "-o", inputs, store);
  const std::string journal_path = journal_path_for(o.output);
  if (const std::string why = input_file_problem(journal_path); !why.empty() && why != "no such file") {
    throw InputError("cannot write -o '" + o.output + "': its journal '" + journal_path + "' " + why);
  }
  std::vector<std::string> not_the_journal = inputs;
  for (const auto& f : store_files(store)) not_the_journal.push_back(f);
  check_not_an_input(journal_path, "-o's journal", not_the_journal);
  if (!o.report.empty()) {  // a report that cannot be written must fail now, not after the run
    std::vector<std::string> read = inputs;
    read.insert(read.end(), {o.output, journal_path});
    check_output(o.report, "--report", read, store);
    try {
      (void)find_chartjs();
    } catch (const ReportError& e) {
      throw InputError(e.what());
    }
  }
  if (named) (void)try_lock_output(o.output, journal, false);
  // An interrupted run's journal holds measured records: a fresh run would start it over and lose them.
  if (std::error_code ec; !o.resume && fs::exists(journal_path, ec) && fs::file_size(journal_path, ec) > 0) {
    throw InputError("-o '" + o.output + "' has the journal of an interrupted run (" + journal_path +
                     "): add --resume to keep its records and run the missing cases, or remove the journal");
  }
  return journal_path;
}

}  // namespace

// plan -> claim the output -> resume-merge -> sweep (rows to the reporter as cases end) -> write.
int cmd_run(RunOptions o, const CLI::App& sub) {
  RunPlan plan = plan_run(o, sub);
  if (plan.dist && !plan.dist->leader()) {  // ranks other than 0 run their side of each case quietly, write nothing
    plan.dist->start(plan.cases, o.measure);
    switch (plan.dist->follow(plan.cases, o.measure, [](const std::string& line) { std::cerr << line << std::endl; })) {
      case DistRun::FollowEnd::done:
        return kExitOk;
      case DistRun::FollowEnd::failed:
        return kExitFailure;
      case DistRun::FollowEnd::interrupted:
        return interrupt_exit_code();
    }
    return kExitFailure;
  }
  Journal journal;
  const std::string journal_path = claim_output(o, plan.inputs, journal);
  (void)check_store(o.store);  // a store that cannot take the run is refused now, not after it
  const PlanIdentity identity = plan_identity(plan.cases, o.measure);
  Resumed resumed = merge_resumed({o.output, o.resume, o.force}, journal_path, identity, plan.cases);
  if (plan.dist)
    plan.dist->start(plan.cases, o.measure);  // after every input check: a failed check must not hold the others
  std::vector<std::string> warnings;
  const Context context = run_context(o.measure, plan, resumed, warnings);
  for (const auto& w : warnings) std::cerr << "trainbench: warning: " << w << "\n";

  journal.open(journal_path, context, o.resume ? Journal::Mode::resume : Journal::Mode::fresh, identity);
  install_interrupt_handlers();
  if (!resumed.done.empty()) {
    std::cerr << fmt::format("resuming: {} case(s) already measured, {} to run\n",
                             plan.cases.size() - resumed.todo.size(), resumed.todo.size());
  }
  const std::unique_ptr<Reporter> reporter = plan.format->make(std::cout);
  const std::unique_ptr<SweepObserver> progress = console_progress(*reporter);
  reporter->begin(context, Feed::live);
  Swept swept = run_sweep(resumed.todo, plan, o.measure, context, journal, *progress);
  return write_run(o, plan, context, resumed, swept, journal, *reporter);
}

Command add_run(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Measure training throughput of a sweep of cases");
  o->SweepFlags::add_to(*sub);
  add_batch(*sub, o->batches, "Batch sizes, comma-separated, or 'auto': the largest that trains");
  add_threads(*sub, o->threads, "Intra-op threads, comma-separated (0: one per core)");
  sub->add_option("--suite,-s", o->suite, "A built-in suite name (quick, ...) or a suite .toml file");
  sub->add_option("--case", o->cases, "Run this case descriptor (repeatable), e.g. resnet50:b16:fp32:nchw:cpu");
  add_output(*sub, o->output, "Results file (default: results/trainbench-<time>.json)");
  add_format(*sub, o->format, "Output: " + reporters_help());
  sub->add_flag("--resume", o->resume, "Run only the cases the output's journal does not have yet");
  sub->add_flag("--force", o->force,
                "With --resume: continue a journal written by a different plan (its records kept as they are)");
  sub->add_option("--report", o->report, "Also write the HTML report of the results to this file");
  o->InputDataFlags::add_to(*sub);
  add_loader_threads(
      *sub, o->loader_threads,
      "Loader threads for --data, comma-separated (0: 1 on a CPU case, all cores but one on a GPU case)");
  o->measure.add_to(*sub);
  o->dist.add_to(*sub);
  o->store.add_to(*sub);
  return {sub, [o, sub] { return cmd_run(*o, *sub); }};
}

}  // namespace trainbench::cli
