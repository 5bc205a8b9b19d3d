// The steps of `trainbench run` once the plan is made (cli/run.cpp): resume-merge, sweep, write.
// cmd_run calls them in that order; each takes what it needs and returns data for the next.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/options.h"
#include "cli/run_dist.h"
#include "results/journal.h"
#include "results/reporter.h"
#include "cases/case.h"

namespace trainbench::cli {

// The plan step's result: what to measure and how to show it.
struct RunPlan {
  std::vector<Case> cases;
  const ReporterInfo* format = nullptr;
  std::unique_ptr<DistRun> dist;  // --dist
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

// Reads the results file and the journal of `o.output` when --resume is given (else nothing is done);
// throws InputError for an unreadable one, or a journal of another plan without --force.
Resumed merge_resumed(const RunOptions& o, const std::string& journal_path, const PlanIdentity& identity,
                      const std::vector<Case>& plan);

// The context the results file gets: the resumed one, or collected now. Warns on stderr about a
// forced resume and the reference BLAS.
Context run_context(const RunOptions& o, const RunPlan& plan, Resumed& resumed);

// Told as the sweep goes: the progress line on stderr and the reporter on stdout listen to it.
class SweepObserver {
 public:
  virtual ~SweepObserver() = default;
  // Case `index` (from 0) of `count` starts; `searching`: its batch is searched, which prints lines of its own.
  virtual void case_starting(size_t index, size_t count, const Case& c, bool searching) = 0;
  virtual void case_finished(const Record& r) = 0;
  virtual void sweep_ended() = 0;
};

// The console's observer: a progress line on stderr (rewritten in place on a terminal) and each
// record to the reporter.
std::unique_ptr<SweepObserver> console_progress(Reporter& reporter);

struct Swept {
  std::vector<Record> fresh;  // measured now, in the order they ran
  bool interrupted = false;   // SIGINT or SIGTERM: the case running was dropped
  std::chrono::steady_clock::time_point start;
};

// Measures `todo` a case at a time (isolated child, batch search or data-parallel lead), journaling
// each record at once; stops early on an interrupt.
Swept run_sweep(const std::vector<Case>& todo, RunPlan& plan, const MeasureFlags& measure, const Context& context,
                Journal& journal, SweepObserver& observer);

// Writes the results file (earlier records and fresh ones, in plan order) and the --report, ends the
// reporter, removes the journal and says how it went. Returns the exit code.
int write_run(const RunOptions& o, const RunPlan& plan, const Context& context, Resumed& resumed, Swept& swept,
              Journal& journal, Reporter& reporter);

}  // namespace trainbench::cli
