// The steps of `trainbench run` once the plan is made (cli/run.cpp plans and shows): resume-merge, the
// context, the sweep, the results file. cmd_run calls them in that order; each takes what it needs and
// returns data for the next. Nothing here prints: what the user is told goes through SweepObserver or
// comes back as data.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cases/case.h"
#include "results/journal.h"
#include "results/reporter.h"
#include "results/results_file.h"
#include "run/dist_run.h"
#include "run/settings.h"
#include "runner/plan.h"

namespace trainbench {

// The plan step's result: what to measure and how to show it.
struct RunPlan {
  std::vector<Case> cases;
  const ReporterInfo* format = nullptr;
  std::unique_ptr<DistRun> dist;    // --dist
  std::vector<std::string> inputs;  // the files it reads (suite, model files, data): no output may be one

  bool searches_batch() const {  // some case's batch is searched (--batch auto)
    for (const auto& c : cases)
      if (c.search_batch) return true;
    return false;
  }
};

// What an earlier, interrupted or finished, run left (--resume).
struct Resumed {
  std::vector<Record> done;        // the records already measured: results file first, then the journal
  std::optional<Context> context;  // theirs, kept for the whole file
  std::string plan_change;         // --resume --force: how the journal's plan differs from this one
  std::vector<Case> todo;          // the plan's cases still to measure, in plan order
};

// Where a run's results go (-o) and whether an earlier run there is taken up (--resume, --force).
struct RunOutput {
  std::string path;
  bool resume = false;
  bool force = false;  // resume even a journal written by a different plan
};

// Reads the results file and the journal of `out.path` when resuming (else nothing is done); throws
// InputError for an unreadable one, or a journal of another plan without `force`.
Resumed merge_resumed(const RunOutput& out, const std::string& journal_path, const PlanIdentity& identity,
                      const std::vector<Case>& plan);

// The context the results file gets: the resumed one, or collected now. `warnings` gets what the user
// should hear of it: a forced resume, the reference BLAS.
Context run_context(const MeasureOptions& measure, const RunPlan& plan, Resumed& resumed,
                    std::vector<std::string>& warnings);

// Told as the sweep goes: the progress line on stderr and the reporter on stdout listen to it.
class SweepObserver {
 public:
  virtual ~SweepObserver() = default;
  // Case `index` (from 0) of `count` starts; `searching`: its batch is searched, which prints lines of its own.
  virtual void case_starting(size_t index, size_t count, const Case& c, bool searching) = 0;
  // A try of a searched batch ended.
  virtual void try_ended(const Case& trial, const Record& r) = 0;
  virtual void case_finished(const Record& r) = 0;
  // The journal could not take a record (`why`): the sweep goes on without it.
  virtual void journal_failed(const std::string& why) = 0;
  virtual void sweep_ended() = 0;
};

struct Swept {
  std::vector<Record> fresh;  // measured now, in the order they ran
  bool interrupted = false;   // SIGINT or SIGTERM: the case running was dropped
  std::chrono::steady_clock::time_point start;
};

// Measures `todo` a case at a time (isolated child, batch search or data-parallel lead), journaling
// each record at once; stops early on an interrupt.
Swept run_sweep(const std::vector<Case>& todo, RunPlan& plan, const MeasureOptions& measure, const Context& context,
                Journal& journal, SweepObserver& observer);

// Writes the results file at `path`, earlier records and fresh ones in plan order, and returns it. A
// failed write throws ResultsError saying where the measured cases still are (the journal stays).
ResultsFile write_run_results(const std::string& path, const RunPlan& plan, const Context& context, Resumed& resumed,
                              Swept& swept, const Journal& journal);

// Everything is in the results file at `path`: its journal goes, and only then the run's lock.
void remove_journal(const std::string& path, Journal& journal);

}  // namespace trainbench
