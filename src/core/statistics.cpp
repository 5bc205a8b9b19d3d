#include "core/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace trainbench {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

Summary summarize(const std::vector<double>& samples) {
  Summary s;
  s.n = static_cast<int64_t>(samples.size());
  if (samples.empty()) return s;
  s.median = median_of(samples);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  s.min = *lo;
  s.max = *hi;
  if (samples.size() > 1) {
    double sq = 0.0;
    for (double x : samples) sq += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(samples.size() - 1));
  }
  std::vector<double> deviations;
  deviations.reserve(samples.size());
  for (double x : samples) deviations.push_back(std::fabs(x - s.median));
  s.jitter = 1.4826 * median_of(std::move(deviations));
  s.median_noise = relative_noise_of_median(s);
  s.lag1_autocorrelation = lag1_autocorrelation(samples);
  return s;
}

double lag1_autocorrelation(const std::vector<double>& samples) {
  const size_t n = samples.size();
  if (n < 3) return NAN;
  const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double d = samples[i] - mean;
    den += d * d;
    if (i + 1 < n) num += d * (samples[i + 1] - mean);
  }
  return den > 0.0 ? num / den : NAN;
}

double relative_noise_of_median(const std::vector<double>& samples) {
  if (samples.size() < 2) return INFINITY;
  return summarize(samples).median_noise;
}

double relative_noise_of_median(const Summary& s) {
  if (s.n < 2 || s.median <= 0.0) return INFINITY;
  // Asymptotic standard error of the median of a normal sample is sqrt(pi/2) * sigma / sqrt(n);
  // the MAD-based sigma keeps one outlier step from dominating the rule.
  const double sigma = s.jitter > 0.0 ? s.jitter : s.stddev;
  return 1.2533141373155 * sigma / std::sqrt(static_cast<double>(s.n)) / s.median;
}

}  // namespace trainbench
