// Summary statistics of step times: what a Record reports besides the raw samples.
#pragma once
#include <cstdint>
#include <vector>

namespace trainbench {

struct Summary {
  double median = 0.0;
  double mean = 0.0;
  double stddev = 0.0;  // sample standard deviation (n - 1)
  double min = 0.0;
  double max = 0.0;
  double jitter = 0.0;  // 1.4826 * median absolute deviation: a robust stddev
  int64_t n = 0;
  // Relative noise of the median (relative_noise_of_median): what the --max-noise rule compares.
  // Infinite (null in JSON) under 2 samples.
  double median_noise = 0.0;
  // Lag-1 autocorrelation of the samples in the order they were taken. The noise estimate assumes
  // independent steps; a clearly positive value means slow drift (clocks, heat, a neighbour), under
  // which the true uncertainty of the median is larger than median_noise says. NaN under 3 samples
  // or when every sample is equal.
  double lag1_autocorrelation = 0.0;

  // Coefficient of variation of the samples (stddev / mean), 0 when undefined.
  double cv() const { return mean > 0.0 ? stddev / mean : 0.0; }
};

double median_of(std::vector<double> values);
Summary summarize(const std::vector<double>& samples);

// Relative noise of the median estimate: the standard error of the median (1.2533 * jitter / sqrt(n))
// divided by the median, assuming independent samples. Used by the noise stopping rule.
double relative_noise_of_median(const std::vector<double>& samples);
double relative_noise_of_median(const Summary& s);

// sum (x_t - mean)(x_t+1 - mean) / sum (x_t - mean)^2; NaN under 3 samples or with no variance.
double lag1_autocorrelation(const std::vector<double>& samples);

}  // namespace trainbench
