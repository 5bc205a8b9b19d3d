// Predicting memory from measurements: run a case at two or three small batches (each a whole case,
// in its own child when run by the CLI), fit peak(b) = fixed + per_sample x b (memory/fit.h) and
// predict the largest batch for each memory size. Returns data only.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "results/record.h"
#include "cases/case.h"
#include "runner/maxbatch.h"

namespace trainbench {

struct MemoryEstimate {
  std::vector<Record>
      tries;            // every batch tried, in order (out-of-memory ones too); the largest ok one carries the fit
  std::string failure;  // non-empty when there is no fit: a try failed, or fewer than two batches trained
  bool fitted = false;
  Record summary;  // == the try that carries the fit (valid when fitted)
  // Batches that ran out of memory while measuring (a small limit), ascending: the fit then stands on
  // smaller batches, perhaps fewer than asked for. The record's memory.assumptions says so too.
  std::vector<int64_t> oom_batches;
  size_t carrier = 0;       // the index in tries of the record that carries the fit (valid when fitted)
  std::string try_failure;  // try_under_sizes: why a size's tries ended before its answer (an error)
};

// Measures `base` at each of `batches` (ascending) with `run_one`. A batch that runs out of memory
// (a small --memory-limit) is replaced by smaller ones: halving while none has trained, then bisecting
// between the largest that trained and the smallest that did not, until as many batches as asked for
// trained or none is left to try; the fit then stands on the batches that trained (at least two;
// oom_batches lists the others). Any other failure stops it. The peak is fitted against
// the batch on two bases: the exact tensor bytes (memory.fixed_bytes and
// memory.activations_bytes_per_sample) and the footprint a limit sees (memory.fit, from which the
// predictions for `sizes` come). `requested_batch` > 0: each prediction says whether it fits.
// `refine_sizes` (sizes the device can hold: --memory-limit, or without one those the machine holds):
// each is predicted from a measured batch within `reach` of its predicted batch (predicted / reach to
// predicted x reach); where none is, one more batch, three quarters of the predicted one, is measured
// (at most kMaxRefinements times per size, smallest size first). A size below the largest measured
// peak is read off the segment between the measured batches around it (memory/fit.h), so a batch
// measured near it counts; above, off the line (memory::fit_memory: the largest batch and the largest at most 3/4 of it). Small batches move the footprint in few of the heap's 64 MiB steps
// and it bends (steeper at small batches), so their slope can be off by a third; a far extrapolation
// carries that error whole. Three quarters: near enough that what is left to extrapolate is short,
// below the prediction far enough that the batch rarely runs out of memory (a line through small
// batches predicts low where the footprint bends that way). No batch added so is above
// `max_refine_batch` (maxbatch's --max-batch): one that would be is measured at that cap instead, and
// none once the largest measured batch is the cap.
// `gpu_context_bytes` (a CPU case): the sizes are predicted as CUDA cards too, from the tensor line
// (memory.gpu_target, memory::predict_gpu_target), with that much of each card outside its allocator.
constexpr int64_t kMaxExtrapolation = 4;  // maxbatch's reach: it measures near the limit anyway
constexpr double kMemoryReach = 4.0 / 3.0;  // `memory`'s: the predicted batch is the answer it gives
constexpr int kMaxRefinements = 2;

MemoryEstimate estimate_memory(const Case& base, const std::vector<int64_t>& batches, const std::vector<int64_t>& sizes,
                               int64_t requested_batch, const std::function<Record(const Case&)>& run_one,
                               const std::vector<int64_t>& refine_sizes = {},
                               int64_t max_refine_batch = std::numeric_limits<int64_t>::max(),
                               double reach = kMaxExtrapolation,
                               std::optional<int64_t> gpu_context_bytes = std::nullopt);

// Each of `sizes` that has a prediction (smallest first), tried under itself as a memory limit with
// `run_under(case, size)`: find_max_batch_near from the line's predicted batch, `within` a fraction
// (0: exact), aimed by aim_batch. Its prediction (in the summary and in the record that carries the
// fit) then holds the largest batch that trained under the size, the smallest that ran out, and the
// line's prediction (MemoryPrediction::trained_under_limit); the tries are appended to e.tries and
// the assumptions say so. An error in a try ends it: try_failure says where, and the sizes not tried
// keep the line's prediction.
void try_under_sizes(MemoryEstimate& e, const Case& base, const std::vector<int64_t>& sizes, double within,
                     const std::function<Record(const Case&, int64_t)>& run_under);

// The largest batch for `size_bytes` on the line through the footprints of the two largest batches
// that trained among `tries` (ok records with memory), with the tensors' slope when the footprint rose
// slower (it grows in steps); 0 when fewer than two batches trained. maxbatch aims each try with it:
// near the limit the line through the latest tries is a short extrapolation.
int64_t aim_batch(const std::vector<Record>& tries, int64_t size_bytes);

// maxbatch under a memory limit of `limit_bytes`: the footprints of kMaxBatchFitBatches (estimate_memory,
// refined at most at twice the larger) predict the largest batch (*predicted; 0 when none was made),
// then find_max_batch_near searches from it, each try aimed by aim_batch, never above a batch that ran
// out, and going up never more than twice the largest batch that trained before it. When fewer than two batches trained
// but the fit's own tries bracket the answer (the largest that trained is one below the smallest that ran out; 0 for
// none) that is the answer and nothing is tried again; otherwise find_max_batch from `start`. A `max_batch` below the
// fit's batches searches with find_max_batch alone. Every try, the fit's first, is in the result. Two fit batches: with
// an exact prediction the whole search is four tries (two to fit, the predicted batch, and one more); a third, 3/4 of
// the predicted batch, when the prediction lies more than kMaxExtrapolation times beyond them.
constexpr int64_t kMaxBatchFitBatches[] = {4, 8};
MaxBatchResult find_max_batch_predicted(const Case& c, int64_t limit_bytes, int64_t start, int64_t max_batch,
                                        const std::function<Record(const Case&)>& run_one, int64_t* predicted);

// What the predictions assume, stored with them (docs/memory.md).
std::string prediction_assumptions(const DeviceSpec& device);

}  // namespace trainbench
