#include "runner/maxbatch.h"

#include <algorithm>

namespace trainbench {

namespace {

// One search's state: every try recorded, the largest batch known to train and the smallest known to
// run out of memory (0: none yet).
struct Probe {
  const Case& base;
  const std::function<Record(const Case&)>& run_one;
  MaxBatchResult& out;
  int64_t fits = 0;
  int64_t too_big = 0;

  // Runs `batch`; false when the search must stop (an error that is not out-of-memory).
  bool attempt(int64_t batch) {
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
  }
};

}  // namespace

MaxBatchResult find_max_batch(const Case& base, int64_t start, int64_t max_batch,
                              const std::function<Record(const Case&)>& run_one) {
  MaxBatchResult out;
  Probe p{base, run_one, out};
  auto attempt = [&](int64_t batch) { return p.attempt(batch); };
  const int64_t& fits = p.fits;
  const int64_t& too_big = p.too_big;

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

MaxBatchResult find_max_batch_near(const Case& base, int64_t predicted, int64_t known_fits, int64_t max_batch,
                                   const std::function<Record(const Case&)>& run_one) {
  MaxBatchResult out;
  Probe p{base, run_one, out, std::max<int64_t>(0, known_fits)};
  auto attempt = [&](int64_t batch) { return p.attempt(batch); };
  const int64_t& fits = p.fits;
  const int64_t& too_big = p.too_big;
  out.largest = fits;
  if (fits >= max_batch) {
    out.hit_limit = true;
    return out;
  }
  bool going = attempt(std::clamp<int64_t>(predicted, fits + 1, max_batch));
  // Bracket the limit: up from the batch that trained by 1, 2, 4, ...; or down from the one that did
  // not, never below a batch known to train.
  for (int64_t step = 1; going && too_big == 0; step *= 2) {
    if (fits >= max_batch) {
      out.hit_limit = true;
      break;
    }
    going = attempt(std::min(fits + step, max_batch));
  }
  for (int64_t step = 1; going && too_big != 0 && too_big - step > fits; step *= 2) {
    const int64_t before = fits;
    going = attempt(too_big - step);
    if (fits != before) break;  // it trained: the bracket is (fits, too_big)
  }
  while (going && too_big != 0 && too_big - fits > 1) going = attempt(fits + (too_big - fits) / 2);
  out.largest = fits;
  return out;
}

}  // namespace trainbench
