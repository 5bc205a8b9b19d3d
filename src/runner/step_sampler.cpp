#include "runner/step_sampler.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "core/clock.h"

namespace trainbench {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

bool still_settling(const std::vector<double>& steps, double tolerance) {
  if (steps.size() < 6) return false;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  const size_t first = std::min<size_t>(3, steps.size() / 3);
  const double head = median({steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(first)});
  const double rest = median({steps.begin() + static_cast<std::ptrdiff_t>(first), steps.end()});
  return rest > 0 && head > (1.0 + tolerance) * rest;
}

SampledSteps sample_steps(Workload& w, const DeviceSpec& device, const MeasureSettings& m, StepAgreement* agreement,
                          const std::function<void(bool)>& on_step, std::unique_ptr<SmClockReader> clock) {
  auto seen_by_all = [&](const StepView& v) { return agreement != nullptr ? agreement->agree(v) : v; };
  SampledSteps out;

  // Warm-up: a fixed count on CPU; on a GPU until step times settle (algorithm search, see WarmupRule).
  const WarmupRule warmup = m.warmup(device.is_gpu(), w.min_warmup_steps());
  std::vector<double> warm;
  const auto warm_start = Clock::now();
  double warm_elapsed = 0.0;
  while (!warmup.done({warm, warm_elapsed})) {
    const auto t0 = Clock::now();
    w.next_batch();
    w.step();
    synchronize(device);
    const double step_s = std::chrono::duration<double>(Clock::now() - t0).count();
    const StepView v = seen_by_all({step_s, seconds_since(warm_start), true});
    warm.push_back(v.step_s);
    warm_elapsed = v.elapsed_s;
  }
  out.warmup_steps = static_cast<long>(warm.size());
  out.warmup_time_s = seconds_since(warm_start);
  if (agreement != nullptr) agreement->before_measuring();

  // Throttling: a step whose SM clock, read right after it, is under 75% of the default is dropped.
  if (!clock) clock = SmClockReader::for_device(device);
  ClockFilter filter(clock->default_mhz());
  StoppingPolicy policy = m.policy();
  out.own.reserve(1024);
  out.agreed.reserve(1024);
  EnergyMeter energy = EnergyMeter::for_device(device);
  int64_t measured_steps = 0;
  energy.start();  // the measured steps only: warm-up and model build are outside
  const auto start = Clock::now();
  while (true) {
    // A step with real data starts by waiting for its batch: the wait is part of the step's time, as it
    // is of a training loop's, and is kept apart so the verdict can say which side limits.
    const auto t0 = Clock::now();
    w.next_batch();
    const auto t_ready = Clock::now();
    w.step();
    synchronize(device);
    const auto t1 = Clock::now();
    ++measured_steps;
    const bool kept_here = filter.keep(clock->read());
    const StepView v = seen_by_all(
        {std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t1 - start).count(), kept_here});
    if (v.kept) {
      out.own.push_back(std::chrono::duration<double>(t1 - t0).count());
      out.agreed.push_back(v.step_s);
      // next_batch waits for the loader, then (GPU) for what is left of its batch's copy: two rows.
      const double copy = w.last_copy_wait_s();
      out.data_wait.push_back(std::chrono::duration<double>(t_ready - t0).count() - copy);
      out.copy_wait.push_back(copy);
    }
    if (on_step) on_step(v.kept);
    if (policy.done({out.agreed, v.elapsed_s})) break;
  }
  energy.stop();
  out.energy = energy.figures(measured_steps * w.samples_per_step());
  out.stop_reason = policy.reason();
  out.still_settling = still_settling(out.own);
  out.throttled_samples = filter.dropped();
  out.mean_sm_clock_mhz = filter.mean_kept_mhz();
  if (out.own.empty()) {
    throw std::runtime_error("every measured step ran with the GPU clock throttled (" +
                             std::to_string(out.throttled_samples) + " dropped)");
  }
  return out;
}

void fill_timing(Record& r, const std::vector<double>& samples, const SampledSteps& s, const MeasureSettings& m) {
  r.samples_s = samples;
  r.step_time_s = summarize(samples);
  r.stop_reason = s.stop_reason;
  r.noise_target = m.max_noise;
  r.noise_target_met = m.noise_target_met(r.step_time_s);
  r.warmup_steps = s.warmup_steps;
  r.warmup_time_s = s.warmup_time_s;
  r.still_settling = s.still_settling;
  r.throttled_samples = s.throttled_samples;
  if (s.mean_sm_clock_mhz) r.mean_sm_clock_mhz = *s.mean_sm_clock_mhz;
  if (s.energy) {
    r.energy_j_per_sample = s.energy->j_per_sample;
    r.mean_power_w = s.energy->mean_power_w;
    r.energy_source = s.energy->source;
  }
}

}  // namespace trainbench
