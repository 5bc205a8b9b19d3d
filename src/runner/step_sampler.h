// The one step sampler every measured path calls: a case in one process (runner/measure.cpp), one
// rank of a data-parallel case (dist/dist_measure.cpp) and explain's whole step (through measure_case).
// It owns the warm-up rule, the GPU clock filter and the stopping policy, and turns the samples into
// the Record's timing fields. A new per-step measurement is added here once. Never prints.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/energy.h"
#include "core/gpu_clock.h"
#include "core/stopping.h"
#include "results/record.h"
#include "workloads/workload.h"

namespace trainbench {

// What one step looked like to this process, and, after agreement, to every process of the case.
struct StepView {
  double step_s = 0.0;     // the step's time
  double elapsed_s = 0.0;  // time since the phase (warm-up or measuring) began
  bool kept = true;        // false: dropped (the GPU clock was throttled during it)
};

// Data-parallel ranks must run the same number of steps: after each step, outside the timed region,
// they agree on one view (the slowest step, the longest elapsed time, dropped if any rank dropped it)
// and every rank's warm-up rule and stopping policy sees that view. One process needs no agreement.
class StepAgreement {
 public:
  virtual ~StepAgreement() = default;
  virtual StepView agree(const StepView& mine) = 0;
  // Before the first measured step, after warm-up (e.g. a barrier, so the clocks start together).
  virtual void before_measuring() {}
};

struct SampledSteps {
  std::vector<double> own;     // this process's kept step times, seconds, in order
  std::vector<double> agreed;  // the agreed times of the same steps (== own without agreement)
  std::string stop_reason;     // the policy's reason (converged | max_time | max_steps)
  long warmup_steps = 0;
  double warmup_time_s = 0.0;
  int64_t throttled_samples = 0;
  std::optional<double> mean_sm_clock_mhz;
  // Energy over every measured step, dropped ones included (they ran inside the window): joules per
  // sample trained and mean power of this process's device (core/energy.h); empty without a counter.
  std::optional<EnergyFigures> energy;
  // Each kept step's data wait (w.next_batch(), inside the step's time), seconds, in the order of `own`.
  std::vector<double> data_wait;
  // Each kept step's wait for the host-to-device copy (Workload::last_copy_wait_s), in the order of
  // `own`; not part of data_wait.
  std::vector<double> copy_wait;
  // The first measured steps were slower than the rest by more than the warm-up's 10%: warm-up ended
  // (a fixed --warmup, or a limit) before the step time settled. See still_settling().
  bool still_settling = false;
};

// Whether the first third of `steps` (3 at most) has a median more than `tolerance` above the median of
// the rest: the measurement began before the step time settled. False with fewer than 6 steps.
bool still_settling(const std::vector<double>& steps, double tolerance = 0.10);

// Warm-up (m.warmup(device is a GPU, the workload's minimum)), then timed steps, each followed by a device synchronize
// before the clock stops, until the stopping policy is satisfied. `on_step(kept)` runs after each measured step outside
// timing (a data-parallel rank reads its communication times there). Throws when every measured step was dropped.
SampledSteps sample_steps(Workload& w, const DeviceSpec& device, const MeasureSettings& m,
                          StepAgreement* agreement = nullptr, const std::function<void(bool kept)>& on_step = {},
                          std::unique_ptr<SmClockReader> clock = nullptr);

// The Record's timing fields from `samples` (in order): step_time_s, samples_s, stop_reason,
// noise_target / noise_target_met, and the warm-up, clock and energy fields of `s`.
void fill_timing(Record& r, const std::vector<double>& samples, const SampledSteps& s, const MeasureSettings& m);

}  // namespace trainbench
