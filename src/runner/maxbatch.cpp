#include "runner/maxbatch.h"

#include <algorithm>

namespace trainbench {

MaxBatchResult find_max_batch(const Case& base, int64_t start, int64_t max_batch,
                              const std::function<Record(const Case&)>& run_one) {
  MaxBatchResult out;
  int64_t fits = 0;      // largest batch known to train
  int64_t too_big = 0;   // smallest batch known to run out of memory (0: none yet)
  // Returns false when the search must stop (an error that is not out-of-memory).
  auto attempt = [&](int64_t batch) {
    Case c = base;
    c.batch = batch;
    Record r = run_one(c);
    out.tries.push_back(r);
    if (r.status == Status::ok) {
      fits = batch;
      out.best = r;
    } else if (r.status == Status::oom) {
      too_big = batch;
    } else {
      out.failure = "batch " + std::to_string(batch) + ": " + r.error;
      return false;
    }
    return true;
  };

  int64_t batch = std::max<int64_t>(1, start);
  while (too_big == 0) {
    if (!attempt(batch)) break;
    if (too_big != 0) break;
    if (batch >= max_batch) {
      out.hit_limit = true;
      break;
    }
    batch = std::min(batch * 2, max_batch);
  }
  if (out.failure.empty() && too_big != 0) {
    int64_t lo = fits;  // 0 when `start` itself did not fit: bisect down towards 1
    while (too_big - lo > 1) {
      const int64_t mid = lo + (too_big - lo) / 2;
      if (!attempt(mid)) break;
      if (fits == mid) lo = mid;
    }
  }
  out.largest = fits;
  return out;
}

}  // namespace trainbench
