// The largest batch that trains: double the batch until a case runs out of memory, then bisect between
// the largest batch that fitted and the smallest that did not. Each try is a whole case (in its own
// child process when run by the CLI), so a failed allocation never poisons the next try.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "results/record.h"
#include "runner/case.h"

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

// The same search started from a prediction: tries `predicted`, then steps away from it by 1, 2, 4, ...
// (up when it trained, down when it ran out of memory) until the limit is bracketed, and bisects the
// bracket. `known_fits` is a batch already known to train (0: none): the search never goes below it.
// An exact prediction costs two tries (predicted trains, predicted + 1 does not).
MaxBatchResult find_max_batch_near(const Case& base, int64_t predicted, int64_t known_fits, int64_t max_batch,
                                   const std::function<Record(const Case&)>& run_one);

}  // namespace trainbench
