// `trainbench run` after planning: merge what a resumed run left, sweep the remaining cases (each told
// to the observer as it ends), write the results file.
#include "run/sweep.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>

#include "run/batch_search.h"
#include "core/clock.h"
#include "core/device.h"
#include "ops/peak.h"
#include "results/results_file.h"
#include "runner/child.h"
#include "runner/measure.h"
#include "runner/plan.h"
#include "runner/run_context.h"

namespace trainbench {
namespace fs = std::filesystem;
namespace {

// The records of a results file already written, then those of the journal that it lacks.
void read_earlier_records(const RunOutput& o, const std::string& journal_path, const PlanIdentity& identity,
                          Resumed& r) {
  if (fs::exists(o.path)) {
    ResultsFile previous = read_results(o.path);
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

// One case of the sweep: its batch searched, its data-parallel lead (--dist), or one isolated child.
Record measure_case(size_t index, const Case& c, RunPlan& plan, const MeasureOptions& measure, const CaseChild& child,
                    SweepObserver& observer, bool* interrupted) {
  if (c.search_batch) {
    const MaxBatchResult m = search_max_batch(
        c, measure, 1, 65536, interrupted, [&](const Case& trial, const Record& r) { observer.try_ended(trial, r); });
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

Resumed merge_resumed(const RunOutput& o, const std::string& journal_path, const PlanIdentity& identity,
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

Context run_context(const MeasureOptions& measure, const RunPlan& plan, Resumed& resumed,
                    std::vector<std::string>& warnings) {
  const Case& first = plan.cases.front();
  if (!resumed.context) {
    std::string devices;
    std::set<std::string> seen;
    for (const auto& c : plan.cases) {
      if (seen.insert(c.device.str()).second) devices += (devices.empty() ? "" : ",") + c.device.str();
    }
    const int threads_hint = first.threads > 0 ? first.threads : measure.auto_threads;
    Context c = collect_context(configure_threads(threads_hint), devices);
    c.cpu_allocator = measure.system_allocator ? "system" : "tuned";
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
    warnings.push_back(*context.resume_note);
  }
  if (context.blas_kind == "reference") {
    warnings.push_back("the reference BLAS is loaded (" + context.blas_library.value_or("?") +
                       "); matrix products run ~35x slower. Install libopenblas0-pthread.");
  }
  return context;
}

Swept run_sweep(const std::vector<Case>& todo, RunPlan& plan, const MeasureOptions& measure, const Context& context,
                Journal& journal, SweepObserver& observer) {
  Swept out;
  out.start = std::chrono::steady_clock::now();
  const CaseChild child = measure.case_child();
  bool journal_ok = true;
  for (size_t i = 0; i < todo.size(); ++i) {
    const Case& c = todo[i];
    observer.case_starting(i, todo.size(), c, c.search_batch);
    Record r = measure_case(i, c, plan, measure, child, observer, &out.interrupted);
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
        observer.journal_failed(e.what());
      }
    }
  }
  observer.sweep_ended();
  return out;
}

ResultsFile write_run_results(const std::string& path, const RunPlan& plan, const Context& context, Resumed& resumed,
                              Swept& swept, const Journal& journal) {
  const size_t fresh = swept.fresh.size();
  ResultsFile results = in_plan_order(plan.cases, context, resumed.done, swept.fresh);
  try {
    write_results_atomic(path, results);
  } catch (const ResultsError& e) {
    // The journal stays as it is: what it holds can still be resumed from once there is room.
    throw ResultsError(fmt::format("{}; the {} case(s) measured are in the table above, and {} holds those it took",
                                   e.what(), fresh, journal.path()));
  }
  return results;
}

void remove_journal(const std::string& path, Journal& journal) {
  std::error_code ec;
  fs::remove(journal_path_for(path), ec);  // everything is in the results file now
  journal.close();                         // and only now the lock goes
}

}  // namespace trainbench
