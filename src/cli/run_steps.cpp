// `trainbench run` after planning: merge what a resumed run left, sweep the remaining cases (progress
// on stderr, records to the reporter as each case ends), write the results file.
#include "cli/run_steps.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "core/clock.h"
#include "core/device.h"
#include "ops/peak.h"
#include "results/results_file.h"
#include "runner/child.h"
#include "runner/measure.h"
#include "runner/plan.h"
#include "runner/run_context.h"

namespace trainbench::cli {
namespace fs = std::filesystem;
namespace {

std::string duration_text(double s) {
  const long t = static_cast<long>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

// The records of a results file already written, then those of the journal that it lacks.
void read_earlier_records(const RunOptions& o, const std::string& journal_path, const PlanIdentity& identity,
                          Resumed& r) {
  if (fs::exists(o.output)) {
    ResultsFile previous = read_results(o.output);
    r.context = previous.context;
    r.done = previous.benchmarks;
  }
  if (!fs::exists(journal_path) || fs::file_size(journal_path) == 0) return;
  JournalContents j = read_journal(journal_path);
  if (j.plan) r.plan_change = plan_difference(*j.plan, identity);
  if (!r.plan_change.empty() && !o.force) {
    throw InputError("cannot resume: the journal " + journal_path + " was written by a different plan (" +
                     r.plan_change +
                     "); rerun with its plan, or add --force to keep its records and run this "
                     "plan's missing cases");
  }
  if (j.context) r.context = j.context;
  std::set<std::string> have;
  for (const auto& d : r.done) have.insert(d.name);
  for (auto& rec : j.records) {
    if (have.insert(rec.name).second) r.done.push_back(std::move(rec));
  }
}

class ConsoleProgress final : public SweepObserver {
 public:
  explicit ConsoleProgress(Reporter& reporter) : reporter_(reporter) {}

  void case_starting(size_t index, size_t count, const Case& c, bool searching) override {
    const double elapsed = seconds_since(start_);
    std::string eta = "estimating";
    if (index > 0) {
      eta = "~" + duration_text(elapsed / static_cast<double>(index) * static_cast<double>(count - index)) + " left";
    }
    const std::string progress = fmt::format("[case {} of {} | {} elapsed | {}] {}", index + 1, count,
                                             duration_text(elapsed), eta, c.descriptor());
    if (tty_) {
      std::cerr << "\r\033[K" << progress << std::flush;
    } else {
      std::cerr << progress << "\n";
    }
    if (searching && tty_) std::cerr << "\n";  // the search prints a line per try
  }

  void case_finished(const Record& r) override {
    clear_line();
    reporter_.record(r);
  }

  void sweep_ended() override { clear_line(); }

 private:
  void clear_line() {
    if (tty_) std::cerr << "\r\033[K" << std::flush;
  }

  Reporter& reporter_;
  const bool tty_ = isatty(STDERR_FILENO) != 0;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// One case of the sweep: its batch searched, its data-parallel lead (--dist), or one isolated child.
Record measure_case(size_t index, const Case& c, RunPlan& plan, const MeasureFlags& measure, const CaseChild& child,
                    bool* interrupted) {
  if (c.search_batch) {
    const MaxBatchResult m = search_max_batch(c, measure, 1, 65536, interrupted);
    if (*interrupted) return {};
    return m.largest > 0 ? m.best : !m.failure.empty() ? failed_record(c, m.failure) : m.tries.back();
  }
  if (plan.dist) return plan.dist->lead_case(index, c, measure, interrupted);
  return run_case_isolated(c, child, interrupted);
}

// Earlier records and fresh ones in plan order (a fresh one replaces an earlier one of its case); the
// earlier file's records that are not in this plan go last.
ResultsFile in_plan_order(const std::vector<Case>& plan, const Context& context, std::vector<Record>& done,
                          std::vector<Record>& fresh) {
  ResultsFile results;
  results.context = context;
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
  for (auto& [name, r] : by_name) results.benchmarks.push_back(std::move(r));
  return results;
}

}  // namespace

Resumed merge_resumed(const RunOptions& o, const std::string& journal_path, const PlanIdentity& identity,
                      const std::vector<Case>& plan) {
  Resumed r;
  if (o.resume) try {
      read_earlier_records(o, journal_path, identity, r);
    } catch (const ResultsError& e) {
      throw InputError(std::string("cannot resume: ") + e.what());
    }
  std::set<std::string> done_names;
  for (const auto& d : r.done) done_names.insert(d.name);
  for (const auto& c : plan) {
    if (!done_names.count(c.descriptor())) r.todo.push_back(c);
  }
  return r;
}

Context run_context(const RunOptions& o, const RunPlan& plan, Resumed& resumed) {
  const Case& first = plan.cases.front();
  if (!resumed.context) {
    std::string devices;
    std::set<std::string> seen;
    for (const auto& c : plan.cases) {
      if (seen.insert(c.device.str()).second) devices += (devices.empty() ? "" : ",") + c.device.str();
    }
    const int threads_hint = first.threads > 0 ? first.threads : o.measure.auto_threads;
    Context c = collect_context(configure_threads(threads_hint), devices);
    c.cpu_allocator = o.measure.system_allocator ? "system" : "tuned";
    c.peak = find_cached_peak(first.device.str(), c.device_name, c.threads, c.libtorch_version);
    if (plan.dist) {
      c.world_size = plan.dist->env().world_size;
      c.dist_backend = plan.dist->backend_for(first);
      c.dist_launcher = plan.dist->env().launcher;
      c.dist_nodes = plan.dist->env().world_size / plan.dist->env().local_world_size;
    }
    resumed.context = std::move(c);
  }
  Context& context = *resumed.context;
  if (!resumed.plan_change.empty()) {
    context.resume_note = "resumed with --force from a journal of a different plan: " + resumed.plan_change;
    std::cerr << "trainbench: warning: " << *context.resume_note << "\n";
  }
  if (context.blas_kind == "reference") {
    std::cerr << "trainbench: warning: the reference BLAS is loaded (" << context.blas_library.value_or("?")
              << "); matrix products run ~35x slower. Install libopenblas0-pthread.\n";
  }
  return context;
}

std::unique_ptr<SweepObserver> console_progress(Reporter& reporter) {
  return std::make_unique<ConsoleProgress>(reporter);
}

Swept run_sweep(const std::vector<Case>& todo, RunPlan& plan, const MeasureFlags& measure, const Context& context,
                Journal& journal, SweepObserver& observer) {
  Swept out;
  out.start = std::chrono::steady_clock::now();
  const CaseChild child = measure.case_child();
  bool journal_ok = true;
  for (size_t i = 0; i < todo.size(); ++i) {
    const Case& c = todo[i];
    observer.case_starting(i, todo.size(), c, c.search_batch);
    Record r = measure_case(i, c, plan, measure, child, &out.interrupted);
    if (out.interrupted) break;
    add_percent_of_peak(r, context);
    // Shown and kept before the journal is written: a journal that cannot take it (a full disk) loses
    // nothing measured. The sweep goes on without the journal, and the results file gets every case.
    observer.case_finished(r);
    out.fresh.push_back(std::move(r));
    if (journal_ok) {
      try {
        journal.append(out.fresh.back());
      } catch (const ResultsError& e) {
        journal_ok = false;
        std::cerr << "trainbench: warning: " << e.what()
                  << "; the run goes on and its results file will hold every case, but a kill before its end "
                     "loses those not in the journal\n";
      }
    }
  }
  observer.sweep_ended();
  return out;
}

int write_run(const RunOptions& o, const RunPlan& plan, const Context& context, Resumed& resumed, Swept& swept,
              Journal& journal, Reporter& reporter) {
  const size_t fresh = swept.fresh.size(), todo = resumed.todo.size();
  const ResultsFile results = in_plan_order(plan.cases, context, resumed.done, swept.fresh);
  try {
    write_results_atomic(o.output, results);
  } catch (const ResultsError& e) {
    // The journal stays as it is: what it holds can still be resumed from once there is room.
    throw ResultsError(fmt::format("{}; the {} case(s) measured are in the table above, and {} holds those it took",
                                   e.what(), fresh, journal.path()));
  }
  if (!o.report.empty()) report_after_run(o.output, o.report);

  const double total = seconds_since(swept.start);
  reporter.end(results);
  if (plan.dist) (plan.format->console ? std::cout : std::cerr) << dist_summary(results.benchmarks) << std::flush;
  if (swept.interrupted) {
    journal.close();
    if (plan.dist) {  // --resume does not work with --dist
      std::cerr << fmt::format("interrupted after {} of {} case(s); finished cases are in {}\n", fresh, todo, o.output);
    } else {
      std::cerr << fmt::format(
          "interrupted after {} of {} case(s); finished cases are in {} — continue with "
          "`trainbench run ... --resume -o {}`\n",
          fresh, todo, o.output, o.output);
    }
    return keep_in_store(o.store.spec(), results, o.output, interrupt_exit_code());
  }
  std::error_code ec;
  fs::remove(journal_path_for(o.output), ec);  // everything is in the results file now
  journal.close();                             // and only now the lock goes
  size_t errors = 0;
  for (const auto& r : results.benchmarks) errors += r.status == Status::error ? 1 : 0;
  std::cerr << fmt::format("{} case(s) in {}; results: {}{}\n", fresh, duration_text(total), o.output,
                           errors ? fmt::format(" ({} failed)", errors) : "");
  return keep_in_store(o.store.spec(), results, o.output, errors ? kExitFailure : kExitOk);
}

}  // namespace trainbench::cli
