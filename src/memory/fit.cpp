#include "memory/fit.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace trainbench::memory {

MemoryFit fit_memory(std::vector<int64_t> batches, std::vector<int64_t> peaks, const std::string& basis, double tolerance) {
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
  const double b1 = static_cast<double>(f.batches[n - 2]), b2 = static_cast<double>(f.batches[n - 1]);
  const double p1 = static_cast<double>(f.peaks[n - 2]), p2 = static_cast<double>(f.peaks[n - 1]);
  f.per_sample_bytes = (p2 - p1) / (b2 - b1);
  f.fixed_bytes = p1 - f.per_sample_bytes * b1;
  if (n > 2) {
    double worst = 0.0;
    for (size_t i = 0; i + 2 < n; ++i) {
      const double measured = static_cast<double>(f.peaks[i]);
      const double off = std::fabs(measured - fitted_peak(f, f.batches[i]));
      worst = std::max(worst, measured > 0.0 ? off / measured : (off > 0.0 ? HUGE_VAL : 0.0));
    }
    f.linearity_error = worst;
    f.linear = worst <= tolerance;
  }
  return f;
}

double fitted_peak(const MemoryFit& f, int64_t b) { return f.fixed_bytes + f.per_sample_bytes * static_cast<double>(b); }

MemoryPrediction predict(const MemoryFit& f, int64_t size_bytes, std::optional<int64_t> requested_batch) {
  MemoryPrediction p;
  p.size_bytes = size_bytes;
  const double room = static_cast<double>(size_bytes) - f.fixed_bytes;
  if (f.per_sample_bytes <= 0.0) {
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

}  // namespace trainbench::memory
