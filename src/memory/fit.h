// The fit model: a training step's peak memory grows linearly with the batch, peak(b) = fixed +
// per_sample x b, for the models trainbench runs (activations scale with the batch; parameters,
// gradients and optimizer state do not). Two measured batches give the line, a third checks it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "predict/gpu_memory.h"
#include "results/memory_info.h"

namespace trainbench::memory {

// A prediction never exceeds this batch (a line that barely rises would otherwise promise billions).
constexpr int64_t kMaxPredictedBatch = 1 << 24;
// A measured peak further than this (fraction) from the line through the others breaks linearity.
constexpr double kLinearityTolerance = 0.05;

// The line's lower batch is the largest measured batch at most this fraction of the largest one: two
// batches closer than that (a refinement measured 546 and then 552 for a biLSTM) differ by less than
// the heap's 64 MiB steps, and a line through them stands on that noise (27 MiB a sample where the
// footprint rose 5.3 between 262 and 546).
constexpr double kLineSpan = 0.75;

// The index, in ascending `batches`, of the line's lower batch: the largest at most kLineSpan of the
// last one, or the one before the last when none is.
size_t line_low_index(const std::vector<int64_t>& batches);
// The same with batches[last] as the largest (the ones after it left out).
size_t line_low_index(const std::vector<int64_t>& batches, size_t last);

// The line through the largest batch and the one line_low_index picks (the ones nearest the sizes
// being predicted), checked against every other point: linearity_error is the largest
// |measured - line| / measured among them (NaN with only two points). Throws std::invalid_argument for
// fewer than two distinct batches or mismatched lengths.
MemoryFit fit_memory(std::vector<int64_t> batches, std::vector<int64_t> peaks, const std::string& basis,
                     double tolerance = kLinearityTolerance);

// Where a batch-independent peak hides the activations: at small batches the peak of a model with
// large parameters and few activations per sample (a biLSTM's embedding, say) is set by the gradients
// or the optimizer step, not by the activations, and a line through such batches rises far slower
// than the peak will once the activations overtake it. The forward's live bytes (memory.
// forward_live_bytes) grow with the batch from the start: when, between the two largest measured
// batches, they grow more than twice as fast as the peak, the peak is taken to be hidden, and this
// returns the smallest batch, the largest measured times a power of two, at which the forward's live
// bytes alone (on their line through those two batches) reach the largest measured peak: from there on
// the activations make the peak. Otherwise (or with fewer than two batches, or no forward bytes) 0.
int64_t flat_until(const std::vector<int64_t>& batches, const std::vector<int64_t>& peaks,
                   const std::vector<int64_t>& forward_live);

// The fitted peak at batch `b`: between two measured batches below the line's lower batch, the
// straight segment joining their measured peaks; elsewhere the line.
double fitted_peak(const MemoryFit& f, int64_t b);

// How much faster per sample the footprint is assumed at most to grow than the tensors beyond the
// measured batches, unless it grew faster between them: up to 1.9x was measured at large batches on a
// CPU heap (docs/memory.md). The lower end of a prediction's interval stands on it.
constexpr double kFootprintPerTensorByte = 2.0;

// For a size beyond the largest measured batch: the interval of a prediction `p` on `footprint`, with
// the exact tensor line `tensors` over the same batches. At most the batch at which the tensors alone
// fill the size (every tensor byte takes memory, and the tensor peak stays on its line); at least the
// batch at which the footprint fills it growing, from the largest measured batch on, as fast per sample
// as the tensors times the larger of kFootprintPerTensorByte and the most it grew per tensor byte
// between two measured batches. p.largest_batch is kept within the interval. Nothing when the size lies
// within the measured batches or the tensors do not grow with the batch.
void add_interval(MemoryPrediction& p, const MemoryFit& footprint, const MemoryFit& tensors);
// The rate add_interval's lower end assumes: the larger of kFootprintPerTensorByte and the most the
// footprint grew per tensor byte from a measured batch's line_low_index partner to it (the same
// batches on both lines).
double footprint_per_tensor_byte(const MemoryFit& footprint, const MemoryFit& tensors);

// The largest batch whose fitted peak fits in `size_bytes` (0: not even one sample), at most
// kMaxPredictedBatch; with the requested batch, whether it fits and the margin. A size below the
// largest measured peak is read off the segment between the two measured batches around it (the
// footprint bends: the line through the two largest batches was 12% low at 4G for resnet50); a size
// above it, off the line.
MemoryPrediction predict(const MemoryFit& f, int64_t size_bytes, std::optional<int64_t> requested_batch = std::nullopt);

// A CUDA card the case did not run on, from a CPU run (docs/memory.md, "A GPU you do not have"), with
// the context and the allocator's overhead of predict/gpu_memory.h.

// For each of `sizes` (a card's memory): the largest batch b with context + ratio x tensors(b) within
// it, on the tensor line `tensors`, at kGpuReservedPerTensorByte (largest_batch),
// kGpuReservedPerTensorByteMax (low) and 1 (high: the tensors alone); each at most kMaxPredictedBatch,
// 0 when not even one sample fits. Nothing (std::nullopt) when the tensors do not grow with the batch.
std::optional<GpuTarget> predict_gpu_target(const MemoryFit& tensors, const std::vector<int64_t>& sizes,
                                            int64_t context_bytes);

}  // namespace trainbench::memory
