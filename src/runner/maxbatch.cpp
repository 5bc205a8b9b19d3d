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

// The smallest batch above `fits` and below `too_big` whose training would end a search within
// `within` (too_big - 1 - b <= tolerated_gap(b)); too_big - 1 when none below it would.
int64_t closing_batch(int64_t fits, int64_t too_big, double within) {
  int64_t b = std::max<int64_t>(fits + 1, static_cast<int64_t>(static_cast<double>(too_big - 1) / (1.0 + within)) - 1);
  while (b < too_big - 1 && b + tolerated_gap(b, within) < too_big - 1) ++b;
  return b;
}

}  // namespace

int64_t tolerated_gap(int64_t batch, double within) {
  if (within <= 0.0 || batch <= 0) return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(batch) * within));
}

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
                                   const std::function<Record(const Case&)>& run_one, const AimFn& aim, double within) {
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
  int64_t up_step = 1;                     // going up: the least step above the last batch that trained
  int aimed_up = 0;                        // aimed tries going up
  int64_t down_step = 1;                   // going down: the step below the last batch that ran out of memory
  bool stepping_down = true;               // no batch has trained since the first ran out of memory
  constexpr int64_t kLongestStepDown = 2;  // then the batch that ran out was not near the limit: bisect
  bool bisect_next = false;                // the last aimed try left more than half the bracket
  while (going) {
    // Bracketed: fits trains, and the answer lies within the tolerated gap above it (exact: fits + 1
    // does not train).
    if (too_big != 0 && too_big - 1 - fits <= tolerated_gap(fits, within)) break;
    if (too_big == 0 && fits >= max_batch) {
      out.hit_limit = true;
      break;
    }
    const int64_t aimed = aim ? aim(out.tries) : 0;
    if (too_big == 0) {
      // Up: where the line through the latest batches that trained puts the limit, at least up_step
      // above the last (doubling from the second aimed try on, so a line that keeps aiming short
      // cannot crawl); without an aim, 1, 2, 4, ... above it. Never more than twice the last batch
      // that trained: a line through two batches whose footprints barely differ (a GPU's convolution
      // search picking smaller workspaces as the batch grows) aims anywhere, and a try far above
      // the limit teaches nothing a doubling would not.
      // Within a tolerance, the least step is the one whose running out of memory ends the search.
      const int64_t b = std::max(aimed, fits + std::max(up_step, tolerated_gap(fits, within) + 1));
      if (aimed <= 0 || ++aimed_up >= 2) up_step *= 2;
      const int64_t furthest = std::max(2 * fits, fits + 1);
      going = attempt(std::min({b, furthest, max_batch}));
      // A capped try that runs out of memory was not aimed near the limit: bisect below it.
      if (b > furthest && too_big != 0) stepping_down = false;
      continue;
    }
    const int64_t width = too_big - fits;
    const int64_t before = fits;
    if (aimed > fits && aimed < too_big && !bisect_next) {
      // The line knows nothing of the batches that ran out of memory: it counts only inside the bracket.
      going = attempt(aimed);
      bisect_next = (too_big - fits) * 2 > width;
    } else if (stepping_down && down_step <= kLongestStepDown &&
               std::min(too_big - down_step, closing_batch(fits, too_big, within)) > fits) {
      // The batch that ran out was aimed near the limit: the limit is likely just below it; step down
      // from it by 1, then 2 (within a tolerance, at least to the batch whose training ends the search).
      bisect_next = false;
      going = attempt(std::min(too_big - down_step, closing_batch(fits, too_big, within)));
      down_step *= 2;
    } else {
      bisect_next = false;
      going = attempt(fits + width / 2);
    }
    if (fits != before) stepping_down = false;  // a batch trained: the bracket is bisected from here
  }
  out.largest = fits;
  return out;
}

}  // namespace trainbench
