// The fit model: a training step's peak memory grows linearly with the batch, peak(b) = fixed +
// per_sample x b, for the models trainbench runs (activations scale with the batch; parameters,
// gradients and optimizer state do not). Two measured batches give the line, a third checks it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/memory_info.h"

namespace trainbench::memory {

// A prediction never exceeds this batch (a line that barely rises would otherwise promise billions).
constexpr int64_t kMaxPredictedBatch = 1 << 24;
// A measured peak further than this (fraction) from the line through the others breaks linearity.
constexpr double kLinearityTolerance = 0.05;

// The line through the two largest batches (the ones nearest the sizes being predicted), checked
// against every other point: linearity_error is the largest |measured - line| / measured among them
// (NaN with only two points). Throws std::invalid_argument for fewer than two distinct batches or
// mismatched lengths.
MemoryFit fit_memory(std::vector<int64_t> batches, std::vector<int64_t> peaks, const std::string& basis,
                     double tolerance = kLinearityTolerance);

// The fitted peak at batch `b`.
double fitted_peak(const MemoryFit& f, int64_t b);

// The largest batch whose fitted peak fits in `size_bytes` (0: not even one sample), at most
// kMaxPredictedBatch; with the requested batch, whether it fits and the margin.
MemoryPrediction predict(const MemoryFit& f, int64_t size_bytes, std::optional<int64_t> requested_batch = std::nullopt);

}  // namespace trainbench::memory
