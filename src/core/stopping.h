// Stopping rules (one small class each, as nvbench's criteria): when has a case measured enough?
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace trainbench {

// What the measuring loop has so far: the step samples (seconds) and the time spent measuring.
struct Progress {
  const std::vector<double>& samples;
  double elapsed_s;
};

class StoppingRule {
 public:
  virtual ~StoppingRule() = default;
  // True when this rule is satisfied (for requirements) or fires (for limits).
  virtual bool satisfied(const Progress& p) const = 0;
  virtual std::string name() const = 0;
};

class MinSteps final : public StoppingRule {
 public:
  explicit MinSteps(long n) : n_(n) {}
  bool satisfied(const Progress& p) const override { return static_cast<long>(p.samples.size()) >= n_; }
  std::string name() const override { return "min_steps"; }
 private:
  long n_;
};

class MinTime final : public StoppingRule {
 public:
  explicit MinTime(double s) : s_(s) {}
  bool satisfied(const Progress& p) const override { return p.elapsed_s >= s_; }
  std::string name() const override { return "min_time"; }
 private:
  double s_;
};

// Relative noise of the median (see relative_noise_of_median) at or under max_fraction.
class MaxNoise final : public StoppingRule {
 public:
  explicit MaxNoise(double max_fraction) : max_(max_fraction) {}
  bool satisfied(const Progress& p) const override;
  std::string name() const override { return "max_noise"; }
 private:
  double max_;
};

class MaxTime final : public StoppingRule {
 public:
  explicit MaxTime(double s) : s_(s) {}
  bool satisfied(const Progress& p) const override { return p.elapsed_s >= s_; }
  std::string name() const override { return "max_time"; }
 private:
  double s_;
};

class MaxSteps final : public StoppingRule {
 public:
  explicit MaxSteps(long n) : n_(n) {}
  bool satisfied(const Progress& p) const override { return static_cast<long>(p.samples.size()) >= n_; }
  std::string name() const override { return "max_steps"; }
 private:
  long n_;
};

// Stop when every requirement holds (min steps, min time, noise), or as soon as any limit fires (max time).
class StoppingPolicy {
 public:
  StoppingPolicy& require(std::unique_ptr<StoppingRule> rule);
  StoppingPolicy& limit(std::unique_ptr<StoppingRule> rule);
  // Returns true when measuring should stop; reason() then names why.
  bool done(const Progress& p);
  const std::string& reason() const { return reason_; }

 private:
  std::vector<std::unique_ptr<StoppingRule>> requirements_;
  std::vector<std::unique_ptr<StoppingRule>> limits_;
  std::string reason_;
};

// When is warm-up over? On a CPU after exactly `min_steps` (oneDNN has no algorithm search to wait
// for). On a GPU at least `min_steps` and then until the last `window` step times all lie within
// `tolerance` of their median: cuDNN benchmark mode / MIOpen find time every algorithm on the first
// step of each new shape, the caching allocator grows, the clocks ramp up. A limit of `max_steps` or
// `max_time_s` ends a warm-up that never settles.
class WarmupRule {
 public:
  static WarmupRule fixed(long steps);
  static WarmupRule until_stable(long min_steps, double max_time_s, long window = 5, double tolerance = 0.10,
                                 long max_steps = 200);
  // `p.samples` are the warm-up step times so far.
  bool done(const Progress& p) const;

 private:
  long min_steps_ = 0;
  long window_ = 0;  // 0: fixed
  double tolerance_ = 0.0;
  long max_steps_ = 0;
  double max_time_s_ = 0.0;
};

struct MeasureSettings {
  long warmup_steps = 3;
  long min_steps = 5;
  double min_time_s = 2.0;
  double max_time_s = 30.0;
  double max_noise = 0.02;  // fraction, from --max-noise PCT
  long max_steps = 100000;

  StoppingPolicy policy() const;
  // fixed(warmup_steps) on a CPU; until_stable(warmup_steps, max_time_s) on a GPU.
  WarmupRule warmup(bool gpu) const;
};

// Samples of one timed call: `warmup_steps` calls first (not kept), then calls until the stopping
// policy is satisfied. `one()` runs one call and returns its seconds (it synchronises as it needs).
struct Sampled {
  std::vector<double> samples;
  std::string stop_reason;
};
Sampled sample_until_done(const MeasureSettings& m, const std::function<double()>& one);

}  // namespace trainbench
