#include "data/verdict.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/statistics.h"

namespace trainbench::data {

DataInfo make_data_info(const LoaderStats& s, const std::vector<double>& step_s, const std::vector<double>& wait_s,
                        int64_t samples_per_step, const std::vector<double>& copy_s) {
  DataInfo d;
  d.source = s.source;
  d.kind = s.kind;
  d.files = s.files;
  d.loader_threads = s.threads;
  d.skipped_files = s.skipped_files;
  d.first_skipped = s.first_skipped;
  d.first_skipped_reason = s.first_skipped_reason;
  d.max_image_pixels = s.max_image_pixels;
  if (!s.transfer.empty()) d.transfer = s.transfer;
  // Capacity: what the threads produce per second of their own work, times the threads. A loader that
  // keeps up spends part of its time blocked on a full queue: its delivered rate is the model's, not
  // what it could do; its busy time is not.
  if (s.busy_thread_s > 0.0) {
    d.loader_samples_s = static_cast<double>(s.samples) / s.busy_thread_s * s.threads;
    d.loader_mb_s = static_cast<double>(s.bytes) / s.busy_thread_s * s.threads / 1e6;
  }
  if (step_s.empty() || step_s.size() != wait_s.size()) return d;
  std::vector<double> compute(step_s.size());
  const bool copies = copy_s.size() == step_s.size();
  // The model's own rate: the step without its waits, for the batch and for the copy.
  for (size_t i = 0; i < step_s.size(); ++i)
    compute[i] = std::max(0.0, step_s[i] - wait_s[i] - (copies ? copy_s[i] : 0.0));
  const double compute_median = summarize(compute).median;
  if (compute_median > 0.0) d.model_samples_s = static_cast<double>(samples_per_step) / compute_median;
  const Summary w = summarize(wait_s);
  d.mean_wait_s = w.mean;
  d.median_wait_s = w.median;
  if (copies) d.median_copy_s = summarize(copy_s).median;
  const double total_step = std::accumulate(step_s.begin(), step_s.end(), 0.0);
  const double total_wait = std::accumulate(wait_s.begin(), wait_s.end(), 0.0);
  d.wait_share = total_step > 0.0 ? total_wait / total_step : 0.0;
  d.verdict = d.wait_share >= kInputBoundWaitShare ? "input-bound" : "compute-bound";
  if (d.loader_samples_s > 0.0 && s.threads > 0) {
    const double per_thread = d.loader_samples_s / s.threads;
    // A hair under the ratio before rounding up: 2.0000000001 threads (floating error) is 2.
    d.threads_needed = static_cast<int>(std::ceil(d.model_samples_s / per_thread * (1.0 - 1e-9)));
  }
  return d;
}

}  // namespace trainbench::data
