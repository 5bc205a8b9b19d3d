// The largest batch that trains: double the batch until a case runs out of memory, then bisect between
// the largest batch that fitted and the smallest that did not. Each try is a whole case (in its own
// child process when run by the CLI), so a failed allocation never poisons the next try.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "results/record.h"
#include "cases/case.h"

namespace trainbench {

struct MaxBatchResult {
  int64_t largest = 0;        // 0: not even the first batch fitted (or a try failed)
  Record best;                // the try at `largest` (valid when largest > 0)
  std::vector<Record> tries;  // every try, in the order run
  std::string failure;        // non-empty when a try ended in `error` (not oom): the search stopped there
  bool hit_limit = false;     // the largest batch tried (max_batch) still fitted
};

// `run_one` measures one case and returns its Record (status ok / oom / error).
MaxBatchResult find_max_batch(const Case& base, int64_t start, int64_t max_batch,
                              const std::function<Record(const Case&)>& run_one);

// Where to try next, from every try so far (0: no idea). maxbatch's is aim_batch
// (runner/memory_estimate.h): the line through the footprints of the latest batches that trained.
using AimFn = std::function<int64_t(const std::vector<Record>& tries)>;

// The same search started from a prediction: tries `predicted`; then, until the limit is bracketed
// (a batch that trains, the next one does not):
// - going up (nothing has run out of memory yet): where `aim` puts the limit, at least 1 above the
//   last batch that trained, and from the second aimed try on at least 2, 4, 8, ... above it, so a
//   line that keeps aiming short cannot crawl (without an aim: 1, 2, 4, ... above it);
// - once a batch ran out: where `aim` puts the limit when that is inside the bracket (an aimed try
//   that does not halve the bracket is followed by a bisection); otherwise, until a batch trains, 1
//   and then 2 below the smallest that ran out (a batch aimed near the limit that runs out is usually
//   just above it); otherwise a bisection.
// `known_fits` is a batch already known to train (0: none): the search never goes below it. An exact
// prediction costs two tries (predicted trains, predicted + 1 does not).
// `within` > 0 (a fraction): the search ends once the largest batch that trained, b, lies within
// tolerated_gap(b, within) below the answer (the smallest batch that ran out, less one); each step up
// is then at least that gap plus one, and each step down reaches at least the batch whose training
// would end it. `largest` is then a batch that trains, at most that gap below the exact answer.
MaxBatchResult find_max_batch_near(const Case& base, int64_t predicted, int64_t known_fits, int64_t max_batch,
                                   const std::function<Record(const Case&)>& run_one, const AimFn& aim = {},
                                   double within = 0.0);

// How far below the answer a batch b that trains may lie for a search `within` a fraction:
// floor(within x b), at least 1; 0 when within is 0 (exact) or b is 0.
int64_t tolerated_gap(int64_t batch, double within);

}  // namespace trainbench
