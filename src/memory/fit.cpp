#include "memory/fit.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "results/number_format.h"

namespace trainbench::memory {

size_t line_low_index(const std::vector<int64_t>& batches, size_t last) {
  if (last == 0 || last >= batches.size()) return 0;
  for (size_t i = last; i-- > 0;) {
    if (static_cast<double>(batches[i]) <= kLineSpan * static_cast<double>(batches[last])) return i;
  }
  return last - 1;
}

size_t line_low_index(const std::vector<int64_t>& batches) {
  return batches.empty() ? 0 : line_low_index(batches, batches.size() - 1);
}

MemoryFit fit_memory(std::vector<int64_t> batches, std::vector<int64_t> peaks, const std::string& basis,
                     double tolerance) {
  if (batches.size() != peaks.size()) throw std::invalid_argument("memory fit: one peak per batch needed");
  std::vector<size_t> order(batches.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return batches[a] < batches[b]; });
  MemoryFit f;
  f.basis = basis;
  for (size_t i : order) {
    f.batches.push_back(batches[i]);
    f.peaks.push_back(peaks[i]);
  }
  const size_t n = f.batches.size();
  if (n < 2 || f.batches[n - 2] == f.batches[n - 1]) {
    throw std::invalid_argument("memory fit: needs at least two different batches");
  }
  const size_t lo = line_low_index(f.batches);
  const double b1 = static_cast<double>(f.batches[lo]), b2 = static_cast<double>(f.batches[n - 1]);
  const double p1 = static_cast<double>(f.peaks[lo]), p2 = static_cast<double>(f.peaks[n - 1]);
  f.per_sample_bytes = (p2 - p1) / (b2 - b1);
  f.fixed_bytes = p1 - f.per_sample_bytes * b1;
  if (n > 2) {
    double worst = 0.0;
    for (size_t i = 0; i + 1 < n; ++i) {
      if (i == lo) continue;
      const double measured = static_cast<double>(f.peaks[i]);
      const double off = std::fabs(measured - (f.fixed_bytes + f.per_sample_bytes * static_cast<double>(f.batches[i])));
      worst = std::max(worst, measured > 0.0 ? off / measured : (off > 0.0 ? HUGE_VAL : 0.0));
    }
    f.linearity_error = worst;
    f.linear = worst <= tolerance;
  }
  return f;
}

int64_t flat_until(const std::vector<int64_t>& batches, const std::vector<int64_t>& peaks,
                   const std::vector<int64_t>& forward_live) {
  const size_t n = batches.size();
  if (n < 2 || peaks.size() != n || forward_live.size() != n) return 0;
  // The two largest batches (the caller measures them in ascending order, but do not rely on it).
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return batches[a] < batches[b]; });
  const size_t i1 = order[n - 2], i2 = order[n - 1];
  const double b1 = static_cast<double>(batches[i1]), b2 = static_cast<double>(batches[i2]);
  if (b2 <= b1 || forward_live[i2] <= 0) return 0;
  const double peak_slope = static_cast<double>(peaks[i2] - peaks[i1]) / (b2 - b1);
  const double forward_slope = static_cast<double>(forward_live[i2] - forward_live[i1]) / (b2 - b1);
  if (forward_slope <= 0.0 || forward_slope <= 2.0 * peak_slope) return 0;
  int64_t b = batches[i2];
  while (b < kMaxPredictedBatch) {
    b *= 2;
    const double forward = static_cast<double>(forward_live[i2]) + forward_slope * (static_cast<double>(b) - b2);
    if (forward >= static_cast<double>(peaks[i2])) return b;
  }
  return kMaxPredictedBatch;
}

namespace {

// The index i of the segment [batches[i], batches[i+1]] that reads off `size`: the largest i whose
// peak is within it, when a later measured batch's peak is above it (so the segment rises); -1 for a
// size at or above the largest batch's peak, or below the smallest's (the line then).
int segment_for_size(const MemoryFit& f, double size) {
  const int n = static_cast<int>(f.batches.size());
  if (n < 3 || size >= static_cast<double>(f.peaks.back())) return -1;
  for (int i = n - 2; i >= 0; --i) {
    if (static_cast<double>(f.peaks[i]) <= size) return i;
  }
  return -1;
}

}  // namespace

double fitted_peak(const MemoryFit& f, int64_t b) {
  const size_t n = f.batches.size();
  if (n >= 3 && b >= f.batches.front() && b < f.batches[line_low_index(f.batches)]) {
    size_t i = 0;
    while (f.batches[i + 1] <= b) ++i;
    const double b0 = static_cast<double>(f.batches[i]), b1 = static_cast<double>(f.batches[i + 1]);
    const double p0 = static_cast<double>(f.peaks[i]), p1 = static_cast<double>(f.peaks[i + 1]);
    return p0 + (p1 - p0) * (static_cast<double>(b) - b0) / (b1 - b0);
  }
  return f.fixed_bytes + f.per_sample_bytes * static_cast<double>(b);
}

double footprint_per_tensor_byte(const MemoryFit& footprint, const MemoryFit& tensors) {
  double ratio = kFootprintPerTensorByte;
  if (tensors.batches != footprint.batches) return ratio;
  // Each measured batch against the largest one at most kLineSpan of it (batches closer than that
  // differ by less than the heap's steps: their ratio would be noise).
  const auto& b = footprint.batches;
  for (size_t j = 1; j < b.size(); ++j) {
    const size_t i = line_low_index(b, j);
    const double dt = static_cast<double>(tensors.peaks[j] - tensors.peaks[i]);
    const double df = static_cast<double>(footprint.peaks[j] - footprint.peaks[i]);
    if (dt > 0.0) ratio = std::max(ratio, df / dt);
  }
  return ratio;
}

void add_interval(MemoryPrediction& p, const MemoryFit& footprint, const MemoryFit& tensors) {
  const size_t n = footprint.batches.size();
  if (n < 2 || tensors.batches != footprint.batches || !(tensors.per_sample_bytes > 0.0)) return;
  const int64_t top = footprint.batches.back();
  if (p.largest_batch <= top) return;
  const double ratio = footprint_per_tensor_byte(footprint, tensors);
  const double size = static_cast<double>(p.size_bytes), t = tensors.per_sample_bytes;
  const double high = std::floor((size - tensors.fixed_bytes) / t);
  const double low =
      static_cast<double>(top) + std::floor((size - static_cast<double>(footprint.peaks.back())) / (ratio * t));
  const double cap = static_cast<double>(kMaxPredictedBatch);
  p.largest_batch_high = static_cast<int64_t>(std::clamp(high, static_cast<double>(top), cap));
  p.largest_batch_low = static_cast<int64_t>(std::clamp(low, static_cast<double>(top), cap));
  p.largest_batch_low = std::min(p.largest_batch_low, p.largest_batch_high);
  p.largest_batch = std::clamp(p.largest_batch, p.largest_batch_low, p.largest_batch_high);
}

MemoryPrediction predict(const MemoryFit& f, int64_t size_bytes, std::optional<int64_t> requested_batch) {
  MemoryPrediction p;
  p.size_bytes = size_bytes;
  const double room = static_cast<double>(size_bytes) - f.fixed_bytes;
  const int seg = segment_for_size(f, static_cast<double>(size_bytes));
  if (seg >= 0) {
    const double b0 = static_cast<double>(f.batches[seg]), b1 = static_cast<double>(f.batches[seg + 1]);
    const double p0 = static_cast<double>(f.peaks[seg]);
    const double slope = (static_cast<double>(f.peaks[seg + 1]) - p0) / (b1 - b0);  // > 0: chosen so
    p.largest_batch = static_cast<int64_t>(std::min(b1 - 1.0, b0 + std::floor((static_cast<double>(size_bytes) - p0) / slope)));
  } else if (f.per_sample_bytes <= 0.0) {
    // Peak does not grow with the batch at the measured points: any batch fits if one does.
    p.largest_batch = room >= 0.0 ? kMaxPredictedBatch : 0;
  } else {
    const double b = std::floor(room / f.per_sample_bytes);
    p.largest_batch = b < 1.0 ? 0 : static_cast<int64_t>(std::min<double>(b, kMaxPredictedBatch));
  }
  if (requested_batch) {
    const double margin = static_cast<double>(size_bytes) - fitted_peak(f, *requested_batch);
    p.requested_fits = margin >= 0.0;
    p.margin_bytes = static_cast<int64_t>(std::llround(margin));
  }
  return p;
}

std::optional<GpuTarget> predict_gpu_target(const MemoryFit& tensors, const std::vector<int64_t>& sizes,
                                            int64_t context_bytes) {
  if (!(tensors.per_sample_bytes > 0.0)) return std::nullopt;
  GpuTarget g;
  g.context_bytes = context_bytes;
  g.reserved_per_tensor_byte = kGpuReservedPerTensorByte;
  g.reserved_per_tensor_byte_max = kGpuReservedPerTensorByteMax;
  const auto batch_at = [&](int64_t size, double ratio) -> int64_t {
    const double room = static_cast<double>(size - context_bytes) / ratio - tensors.fixed_bytes;
    const double b = std::floor(room / tensors.per_sample_bytes);
    return b < 1.0 ? 0 : static_cast<int64_t>(std::min<double>(b, kMaxPredictedBatch));
  };
  for (int64_t size : sizes) {
    GpuTargetPrediction p;
    p.size_bytes = size;
    p.largest_batch = batch_at(size, g.reserved_per_tensor_byte);
    p.largest_batch_low = batch_at(size, g.reserved_per_tensor_byte_max);
    p.largest_batch_high = batch_at(size, 1.0);
    g.predictions.push_back(p);
  }
  g.assumptions = fmt::format(
      "a CUDA card of each size, from this CPU's exact tensor line ({:.0f} + {:.0f} x batch bytes): the card's "
      "memory less {} outside the caching allocator (the runtime's context and the libraries' handles, measured "
      "on an H100 with CUDA 13.0; --gpu-context sets another), the allocator reserving {:g}x the tensor bytes "
      "(its workspaces, rounding and cached blocks, measured at the largest batch of two fp32 models on that "
      "H100), at most {:g}x (the lower end), at least 1x (the tensors alone: the upper end); the card's kernels "
      "keep the same activations as the CPU's (measured equal for resnet18); other GPUs, precisions and "
      "LibTorch versions were not measured",
      tensors.fixed_bytes, tensors.per_sample_bytes, format_bytes(context_bytes), g.reserved_per_tensor_byte,
      g.reserved_per_tensor_byte_max);
  return g;
}

}  // namespace trainbench::memory
