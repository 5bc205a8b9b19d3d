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

// Where to try next, from every try so far (0: no idea). maxbatch's is aim_batch
// (runner/memory_estimate.h): the line through the footprints of the latest batches that trained.
using AimFn = std::function<int64_t(const std::vector<Record>& tries)>;

// The same search started from a prediction: tries `predicted`, then each next batch where `aim` puts
// it (inside the bracket), or without an aim, steps away from it by 1, 2, 4, ... (up when it trained,
// down when it ran out of memory) until the limit is bracketed, and bisects the bracket. Aimed tries
// are kept from crawling: going up, after two aimed tries that trained, each next one is at least 1, 2,
// 4, ... above the last; going down, an aimed try that did not halve the bracket is followed by a
// bisection, and where the aim says nothing inside the bracket, the search steps down from the batch
// that ran out by 1, then 2 (an aimed batch that runs out is usually just above the limit) until one
// trains, and bisects. `known_fits` is a batch already known to train (0: none): the search never goes below it.
// An exact prediction costs two tries (predicted trains, predicted + 1 does not).
MaxBatchResult find_max_batch_near(const Case& base, int64_t predicted, int64_t known_fits, int64_t max_batch,
                                   const std::function<Record(const Case&)>& run_one, const AimFn& aim = {});

}  // namespace trainbench
