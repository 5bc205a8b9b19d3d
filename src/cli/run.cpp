// `trainbench run`: plan the cases, run each in a child process, journal every record at once,
// print rows live with progress, and write the results file atomically at the end.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "core/input_file.h"
#include "cli/options.h"
#include "ops/peak.h"
#include "cli/run_dist.h"
#include "report/html_report.h"
#include "results/journal.h"
#include "results/reporter.h"
#include "results/results_file.h"
#include "runner/child.h"
#include "runner/plan.h"
#include "runner/suite.h"

namespace trainbench::cli {
namespace fs = std::filesystem;
namespace {

std::string duration_text(double s) {
  const long t = static_cast<long>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

}  // namespace

std::string default_output_path(const std::string& kind) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::gmtime(&now));
  return "results/" + kind + "-" + stamp + ".json";
}

void check_writable(const std::string& output, const std::string& flag) {
  const std::string what = "cannot write " + (flag.empty() ? std::string("output") : flag) + " '" + output + "': ";
  fs::path p(output);
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (!fs::create_directories(dir, ec) || ec) {
      throw InputError(what + "cannot create directory '" + dir.string() + "'");
    }
  }
  if (fs::is_directory(p, ec)) throw InputError(what + "it is a directory");
  if (fs::exists(p, ec) && !fs::is_regular_file(p, ec)) throw InputError(what + "it is not a regular file");
  if (access(dir.c_str(), W_OK) != 0) {
    throw InputError(what + "directory '" + dir.string() + "' is not writable");
  }
  if (fs::exists(p, ec) && access(p.c_str(), W_OK) != 0) {
    throw InputError(what + "file is not writable");
  }
}

void check_not_an_input(const std::string& output, const std::string& output_flag, const std::vector<std::string>& inputs) {
  for (const auto& in : inputs) {
    if (same_file(output, in)) {
      throw InputError(output_flag + " '" + output + "' is the same file as the input '" + in +
                       "': writing it would destroy that input");
    }
  }
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
  for (const auto& t : split_list(text, "threads")) out.push_back(static_cast<int>(checked_number(t, kThreadCount, "--threads")));
  return out;
}

// `auto_batch` receives the descriptors of cases whose batch is to be searched (`--batch auto`).
std::vector<Case> plan_from(const RunOptions& o, const Suite* suite, const GivenFlags& given,
                            std::set<std::string>& auto_batch) {
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
  if (suite != nullptr) {
    for (const auto& g : suite->groups) {
      Sweep s = g;
      if (!o.devices.empty() && s.devices.empty()) s.devices = split_list(o.devices, "device");
      // A settings flag given with --suite replaces the groups' value (and their per-device ones).
      auto with_flags = [&](auto& sweep) {
        if (given.precision) sweep.precisions = split_list(o.precisions, "precision");
        if (given.layout) sweep.layouts = split_list(o.layouts, "layout");
        if (given.optimizer) sweep.optimizers = split_list(o.optimizers, "optimizer");
        if (given.threads) sweep.threads = thread_list(o.threads);
      };
      with_flags(s);
      if (given.forward_only) s.forward_only = true;
      if (given.data) {
        s.data = o.data;
        s.data_dtype = o.data_dtype;
        s.data_transfer = o.data_transfer;
        s.loader_threads = loader_thread_list(o.loader_threads, true);
      }
      for (auto& [device, over] : s.per_device) {
        if (given.precision) over.precisions.reset();
        if (given.layout) over.layouts.reset();
        if (given.optimizer) over.optimizers.reset();
        if (given.threads) over.threads.reset();
      }
      for (auto& c : make_plan(s)) {
        if (searches_batch(s, c.device.type)) auto_batch.insert(c.descriptor());
        plan.push_back(std::move(c));
      }
    }
  }
  if (!o.sets.empty() && o.models.empty()) throw InputError("--set needs --model (it sets that workload's parameters)");
  if (o.script.given() && o.models.empty()) throw InputError("--input and --target need --model FILE.pt (a TorchScript file)");
  if (!o.models.empty() || !o.batches.empty()) {
    Sweep s;
    s.params = params_product(parse_sets(o.sets));
    s.models = o.models.empty() ? std::vector<std::string>{} : sweep_models(o.models, o.script, s.params);
    const bool search = o.batches == "auto";
    if (!search && !o.batches.empty()) {
      for (const auto& b : split_list(o.batches, "batch size")) {
        if (b == "auto") throw InputError("--batch '" + o.batches + "': auto cannot be combined with sizes; give auto alone");
      }
    }
    s.batches = o.batches.empty() ? std::vector<int64_t>{} : search ? std::vector<int64_t>{1} : parse_int_list(o.batches, "batch size");
    s.precisions = split_list(o.precisions, "precision");
    s.layouts = split_list(o.layouts, "layout");
    s.optimizers = split_list(o.optimizers, "optimizer");
    if (!o.devices.empty()) s.devices = split_list(o.devices, "device");
    s.threads = thread_list(o.threads);
    s.forward_only = o.forward_only;
    s.data = o.data;
    s.data_dtype = o.data_dtype;
    s.data_transfer = o.data_transfer;
    s.loader_threads = loader_thread_list(o.loader_threads, true);
    for (auto& c : make_plan(s)) {
      if (search) auto_batch.insert(c.descriptor());
      plan.push_back(std::move(c));
    }
  }
  if (plan.empty()) throw InputError("nothing to run: give --model and --batch, --suite NAME, or --case DESCRIPTOR");
  // The same case twice would measure twice and collide in the journal.
  std::set<std::string> seen;
  std::vector<Case> unique;
  for (auto& c : plan) {
    if (seen.insert(c.descriptor()).second) unique.push_back(std::move(c));
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
    for (const char* flag : {"--batch", "--precision", "--layout", "--optimizer", "--threads", "--set", "--forward-only",
                             "--data", "--loader-threads", "--data-dtype", "--data-transfer"}) {
      if (given(flag)) {
        throw InputError(std::string(flag) + " does not apply to --case cases (the descriptor sets it, e.g. :t4: for "
                         "threads); it shapes a --model sweep");
      }
    }
    if (given("--device")) throw InputError("--device does not apply to --case cases: the device is the descriptor's last field");
  }
  if (o.models.empty() && !o.suite.empty()) {
    for (const char* flag : {"--batch", "--set"}) {
      if (given(flag)) {
        throw InputError(std::string(flag) + " does not apply to --suite cases: the suite's groups set it (edit the suite "
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
    if (!given("--data") && given(flag)) throw InputError(std::string(flag) + " needs --data (synthetic data has no loader)");
  }
  return g;
}

// A suite's settings apply unless the flag was given on the command line. `names` learns which values
// the suite set, for the conflict check.
void apply_suite_settings(const SuiteSettings& s, const CLI::App& sub, MeasureFlags& m, LimitNames& names) {
  auto given = [&](const char* flag) { return sub.count(flag) > 0; };
  auto origin = [&](const char* key) { return s.origin.count(key) ? s.origin.at(key) : std::string(key); };
  if (s.warmup && !given("--warmup")) m.warmup = *s.warmup;
  if (s.min_steps && !given("--min-steps")) {
    m.min_steps = *s.min_steps;
    names.min_steps = origin("min_steps");
  }
  if (s.min_time && !given("--min-time")) {
    m.min_time_s = *s.min_time;
    names.min_time = origin("min_time");
  }
  if (s.max_time && !given("--max-time")) {
    m.max_time_s = *s.max_time;
    names.max_time = origin("max_time");
  }
  if (s.max_noise_pct && !given("--max-noise")) m.max_noise_pct = *s.max_noise_pct;
  if (s.timeout && !given("--timeout")) m.timeout_s = *s.timeout;
  if (s.memory_limit && !given("--memory-limit")) m.memory_limit = *s.memory_limit;
}

}  // namespace

int cmd_run(RunOptions o, const CLI::App& sub) {
  const GivenFlags given = check_sweep_flags(o, sub);
  std::unique_ptr<Suite> suite;
  LimitNames limits = limits_given(sub);
  if (!o.suite.empty()) {
    suite = std::make_unique<Suite>(load_suite(o.suite));
    apply_suite_settings(suite->settings, sub, o.measure, limits);
  }
  check_limit_conflicts(o.measure, limits);
  const ReporterInfo& format = [&]() -> const ReporterInfo& {
    try {
      return find_reporter(o.format);
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
  }();
  (void)o.measure.resolve();  // rejects a bad --memory-limit before anything runs
  if (o.resume && o.output.empty()) throw InputError("--resume needs -o FILE: the results file of the run to resume");
  std::set<std::string> auto_batch;
  std::vector<Case> plan = plan_from(o, suite.get(), given, auto_batch);
  if (!auto_batch.empty()) default_cpu_memory_limit(plan, o.measure);

  // --dist: ranks other than 0 run their side of each case quietly and write nothing.
  std::unique_ptr<DistRun> dist;
  if (o.dist.enabled) {
    if (o.resume) throw InputError("--resume does not work with --dist yet: run the remaining cases with --case");
    if (!auto_batch.empty()) throw InputError("--batch auto does not work with --dist: give the batch of each rank");
    dist = std::make_unique<DistRun>(o.dist);
    if (!dist->leader()) {
      dist->start(plan, o.measure);
      return dist->follow(plan, o.measure);
    }
  }
  if (o.force && !o.resume) throw InputError("--force only goes with --resume");
  if (o.output.empty()) o.output = default_output_path("trainbench");
  check_writable(o.output, "-o");
  const std::string journal_path = journal_path_for(o.output);
  if (const std::string why = input_file_problem(journal_path); !why.empty() && why != "no such file") {
    throw InputError("cannot write -o '" + o.output + "': its journal '" + journal_path + "' " + why);
  }
  if (!o.report.empty()) {  // a report that cannot be written must fail now, not after the run
    check_writable(o.report, "--report");
    check_not_an_input(o.report, "--report", {o.output, journal_path});
    try {
      (void)find_chartjs();
    } catch (const ReportError& e) {
      throw InputError(e.what());
    }
  }

  // The run's lock, held until the results file is written: a second run on the same -o stops here.
  Journal journal;
  try {
    journal.lock(journal_path);
  } catch (const JournalBusy& e) {
    throw InputError(e.what());
  } catch (const ResultsError& e) {
    throw InputError("cannot write -o '" + o.output + "': " + e.what());
  }
  // An interrupted run's journal holds measured records: a fresh run would start it over and lose them.
  if (std::error_code ec; !o.resume && fs::exists(journal_path, ec) && fs::file_size(journal_path, ec) > 0) {
    throw InputError("-o '" + o.output + "' has the journal of an interrupted run (" + journal_path +
                     "): add --resume to keep its records and run the missing cases, or remove the journal");
  }
  const PlanIdentity identity = plan_identity(plan, o.measure);

  // Cases already measured (resume): from the journal, and from a results file already written.
  std::vector<Record> done;
  std::optional<Context> context;
  std::string plan_change;  // --resume --force: how the journal's plan differs from this one
  if (o.resume) try {
    if (fs::exists(o.output)) {
      ResultsFile previous = read_results(o.output);
      context = previous.context;
      done = previous.benchmarks;
    }
    if (fs::exists(journal_path) && fs::file_size(journal_path) > 0) {
      JournalContents j = read_journal(journal_path);
      if (j.plan) plan_change = plan_difference(*j.plan, identity);
      if (!plan_change.empty() && !o.force) {
        throw InputError("cannot resume: the journal " + journal_path + " was written by a different plan (" +
                         plan_change + "); rerun with its plan, or add --force to keep its records and run this "
                         "plan's missing cases");
      }
      if (j.context) context = j.context;
      std::set<std::string> have;
      for (const auto& r : done) have.insert(r.name);
      for (auto& r : j.records) {
        if (have.insert(r.name).second) done.push_back(std::move(r));
      }
    }
  } catch (const ResultsError& e) {
    throw InputError(std::string("cannot resume: ") + e.what());
  }
  std::set<std::string> done_names;
  for (const auto& r : done) done_names.insert(r.name);
  std::vector<Case> todo;
  for (const auto& c : plan) {
    if (!done_names.count(c.descriptor())) todo.push_back(c);
  }

  if (dist) dist->start(plan, o.measure);  // after every input check: a failed check must not hold the others
  const int threads_hint = plan.front().threads > 0 ? plan.front().threads : o.measure.auto_threads;
  if (!context) {
    std::string devices;
    std::set<std::string> seen;
    for (const auto& c : plan) {
      if (seen.insert(c.device.str()).second) devices += (devices.empty() ? "" : ",") + c.device.str();
    }
    context = collect_context(configure_threads(threads_hint), devices);
    context->cpu_allocator = o.measure.system_allocator ? "system" : "tuned";
    context->peak = find_cached_peak(plan.front().device.str(), context->device_name, context->threads,
                                     context->libtorch_version);
    if (dist) {
      context->world_size = dist->env().world_size;
      context->dist_backend = dist->backend_for(plan.front());
    }
  }
  if (!plan_change.empty()) {
    context->resume_note = "resumed with --force from a journal of a different plan: " + plan_change;
    std::cerr << "trainbench: warning: " << *context->resume_note << "\n";
  }
  if (context->blas_kind == "reference") {
    std::cerr << "trainbench: warning: the reference BLAS is loaded (" << context->blas_library.value_or("?")
              << "); matrix products run ~35x slower. Install libopenblas0-pthread.\n";
  }

  journal.open(journal_path, *context, o.resume ? Journal::Mode::resume : Journal::Mode::fresh, identity);
  install_interrupt_handlers();

  const std::unique_ptr<Reporter> reporter = format.make(std::cout);
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (!done.empty()) {
    std::cerr << fmt::format("resuming: {} case(s) already measured, {} to run\n", plan.size() - todo.size(), todo.size());
  }
  reporter->begin(*context, Feed::live);

  std::vector<Record> fresh;
  const auto start = std::chrono::steady_clock::now();
  bool interrupted = false;
  const std::vector<std::string> child_flags = o.measure.child_args();
  for (size_t i = 0; i < todo.size(); ++i) {
    const Case& c = todo[i];
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string eta = "estimating";
    if (i > 0) eta = "~" + duration_text(elapsed / static_cast<double>(i) * static_cast<double>(todo.size() - i)) + " left";
    const std::string progress =
        fmt::format("[case {} of {} | {} elapsed | {}] {}", i + 1, todo.size(), duration_text(elapsed), eta, c.descriptor());
    if (tty) {
      std::cerr << "\r\033[K" << progress << std::flush;
    } else {
      std::cerr << progress << "\n";
    }

    Record r;
    if (auto_batch.count(c.descriptor())) {
      if (tty) std::cerr << "\n";
      const MaxBatchResult m = search_max_batch(c, o.measure, 1, 65536, &interrupted);
      if (interrupted) break;
      r = m.largest > 0 ? m.best : !m.failure.empty() ? failed_record(c, m.failure) : m.tries.back();
    } else if (dist) {
      r = dist->lead_case(i, c, o.measure, &interrupted);
      if (interrupted) break;
    } else {
      r = run_case_isolated(c, child_flags, o.measure.timeout_s, !o.measure.memory_limit.empty(), &interrupted);
      if (interrupted) break;
    }
    add_percent_of_peak(r, *context);
    journal.append(r);
    if (tty) std::cerr << "\r\033[K" << std::flush;
    reporter->record(r);
    fresh.push_back(std::move(r));
  }
  if (tty) std::cerr << "\r\033[K" << std::flush;

  // Results in plan order: earlier records first for cases measured before a resume.
  ResultsFile results;
  results.context = *context;
  std::map<std::string, Record> by_name;
  for (auto& r : done) by_name.emplace(r.name, std::move(r));
  for (auto& r : fresh) by_name.insert_or_assign(r.name, std::move(r));
  for (const auto& c : plan) {
    auto it = by_name.find(c.descriptor());
    if (it != by_name.end()) {
      results.benchmarks.push_back(std::move(it->second));
      by_name.erase(it);
    }
  }
  for (auto& [name, r] : by_name) results.benchmarks.push_back(std::move(r));  // from the resumed file, not in plan
  write_results_atomic(o.output, results);
  if (!o.report.empty()) report_after_run(o.output, o.report);

  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  reporter->end(results);
  if (dist) (format.console ? std::cout : std::cerr) << dist_summary(results.benchmarks) << std::flush;
  if (interrupted) {
    journal.close();
    if (dist) {  // --resume does not work with --dist
      std::cerr << fmt::format("interrupted after {} of {} case(s); finished cases are in {}\n", fresh.size(),
                               todo.size(), o.output);
    } else {
      std::cerr << fmt::format("interrupted after {} of {} case(s); finished cases are in {} — continue with "
                               "`trainbench run ... --resume -o {}`\n",
                               fresh.size(), todo.size(), o.output, o.output);
    }
    return 130;
  }
  std::error_code ec;
  fs::remove(journal_path, ec);  // everything is in the results file now
  journal.close();               // and only now the lock goes
  size_t errors = 0;
  for (const auto& r : results.benchmarks) errors += r.status == Status::error ? 1 : 0;
  std::cerr << fmt::format("{} case(s) in {}; results: {}{}\n", fresh.size(), duration_text(total), o.output,
                           errors ? fmt::format(" ({} failed)", errors) : "");
  return errors ? kExitFailure : kExitOk;
}

}  // namespace trainbench::cli
