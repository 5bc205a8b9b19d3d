// The `run --dist` side of a worker (cli/run.cpp calls it): rank 0's `run` hosts the job's TCPStore for the whole
// sweep; every rank's runner runs each case in a child process as usual, and the children of one case join a process
// group through that store (a key prefix per case). Before each case rank 0 measures the same case alone in one process
// (the scaling baseline) while the others wait for its go. A case that fails on one rank ends on all of them: the
// failing rank's runner says so in the store
// (`failed`), every other runner kills its case child as soon as it reads that, and each says how its
// side ended (`ended/R`: "ok", its error, or what its killed child was doing). Rank 0 waits for every
// rank's end (up to --dist-timeout) before it starts the next case, and its record of a failed case
// names each rank that failed or was stuck. A rank that does not end a case at all (its node died) is
// lost: rank 0 records every later case as not run, and tells the other ranks to stop.
#pragma once
#include <string>
#include <vector>

#include <functional>

#include "cases/case.h"
#include "dist/env.h"
#include "dist/process_group.h"
#include "results/record.h"
#include "run/settings.h"
#include "runner/child.h"

namespace trainbench {

class DistRun {
 public:
  // Reads the environment only (no network): throws InputError for a missing or bad variable.
  explicit DistRun(DistOptions options);

  // Connects to (rank 0: hosts) the store and checks that every rank has the same plan and settings.
  // Sets measure.auto_threads so that the workers on a node share its cores.
  void start(const std::vector<Case>& plan, MeasureOptions& measure);

  const dist::DistEnv& env() const { return env_; }
  bool leader() const { return env_.rank == 0; }
  // The backend case `c` runs with.
  std::string backend_for(const Case& c) const;

  // Rank 0: the baseline, then the go for the others, then the data-parallel measurement. Returns the
  // Record with the scaling fields filled in.
  Record lead_case(size_t index, const Case& c, const MeasureOptions& measure, bool* interrupted);

  // Ranks > 0: their side of every case of the plan, quietly: `say` gets one line for a failed case, and
  // the error that ends the worker (rank 0 lost, or it stopped the sweep).
  enum class FollowEnd { done, failed, interrupted };
  FollowEnd follow(const std::vector<Case>& plan, const MeasureOptions& measure,
                   const std::function<void(const std::string& line)>& say);

 private:
  std::string key(size_t index, const std::string& what) const;
  // The case child of case `index` on this rank: it gives up when another rank has failed the case.
  CaseChild rank_child(size_t index, const MeasureOptions& measure);
  // After this rank's child of case `index` ended with `r`: tells the other ranks, and on rank 0 waits
  // for theirs, adding to `r` what failed or was stuck elsewhere.
  void end_case(size_t index, Record& r);

  DistOptions flags_;
  dist::DistEnv env_;
  dist::StorePtr store_;
  std::string stuck_;  // what this rank's killed case child was doing, for its `ended` key
  std::string lost_;   // rank 0: a rank whose runner did not end a case ("rank 1 was lost in case 2")
};

}  // namespace trainbench
