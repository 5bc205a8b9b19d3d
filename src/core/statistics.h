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

  // Coefficient of variation of the samples (stddev / mean), 0 when undefined.
  double cv() const { return mean > 0.0 ? stddev / mean : 0.0; }
};

double median_of(std::vector<double> values);
Summary summarize(const std::vector<double>& samples);

// Relative noise of the median estimate: the standard error of the median (1.2533 * jitter / sqrt(n))
// divided by the median. Used by the noise stopping rule.
double relative_noise_of_median(const std::vector<double>& samples);

}  // namespace trainbench
