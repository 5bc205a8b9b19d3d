// Stopping rules (one small class each, as nvbench's criteria): when has a case measured enough?
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/statistics.h"
#include "core/value_rules.h"

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

// Stop when every requirement holds (min steps, min time, noise), or as soon as any limit fires (max
// time, max steps) once every floor holds. A floor (min steps) is a requirement no limit can cut: a
// median of two steps is no measurement, so only the runner's --timeout ends a case below it.
class StoppingPolicy {
 public:
  StoppingPolicy& floor(std::unique_ptr<StoppingRule> rule);
  StoppingPolicy& require(std::unique_ptr<StoppingRule> rule);
  StoppingPolicy& limit(std::unique_ptr<StoppingRule> rule);
  // Returns true when measuring should stop; reason() then names why.
  bool done(const Progress& p);
  const std::string& reason() const { return reason_; }

 private:
  std::vector<std::unique_ptr<StoppingRule>> floors_;
  std::vector<std::unique_ptr<StoppingRule>> requirements_;
  std::vector<std::unique_ptr<StoppingRule>> limits_;
  std::string reason_;
};

// When is warm-up over? fixed: after exactly `min_steps` (the user's --warmup N). until_stable (the
// default): at least `min_steps`, then until the last `window` step times all lie within `tolerance`
// of their median. How many steps a case needs depends on what runs it, not on the model: TorchScript's
// profiling executor optimises the graph during its first runs, cuDNN benchmark mode / MIOpen find time
// every algorithm on the first step of each new shape, oneDNN creates its primitives, the caching
// allocator grows, the clocks ramp up. A limit of `max_steps` or `max_time_s` ends a warm-up that never
// settles. Either kind ends after `max_time_s` (> 0) once at least one step ran: a huge --warmup
// cannot keep a case from ever measuring.
class WarmupRule {
 public:
  static WarmupRule fixed(long steps, double max_time_s = 0.0);
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

// The stopping rule's settings. These defaults are the only ones: the CLI's flags start from them
// (cli/options.h) and docs/methodology.md quotes them.
struct MeasureSettings {
  long warmup_steps = 2;      // until settled: at least this many; fixed: exactly this many
  bool warmup_fixed = false;  // --warmup N given (or a suite's warmup): exactly N steps
  long min_steps = 5;         // a floor: no limit ends a case before it (only the runner's timeout)
  double min_time_s = 2.0;
  double max_time_s = 60.0;  // a limit on measuring once min_steps holds; warm-up is bounded by it too
  double max_noise = 0.02;   // fraction, from --max-noise PCT
  long max_steps = 100000;

  StoppingPolicy policy() const;
  // fixed(warmup_steps) when warmup_fixed; else until_stable over a window of 5 steps on a GPU and 3 on
  // a CPU, within 10%, after at least warmup_steps and after the workload's own minimum (the window
  // then lies wholly past it); both bounded by max_time_s.
  WarmupRule warmup(bool gpu, long workload_min_steps = 0) const;
  // True when `s` (the measured steps' summary) meets the noise target.
  bool noise_target_met(const Summary& s) const;
};

// The settings a user gives for when a case has measured enough, each declared once, here, with its
// rule (as nvbench's criteria declare their parameters): its name (the suite's [settings] key; the flag
// is --NAME with '-' for '_'), its help, the one rule of its values, and where MeasureSettings holds it.
// The flags, the suite keys, the arguments a case's child gets and the check of a minimum against its
// maximum are made from this table (cli/flag_groups.cpp, runner/suite.cpp). A new setting: its field in
// MeasureSettings, its row in stop_settings() and its use in policy() or warmup() (docs/architecture.md).
struct StopSetting {
  const char* name;  // "min_time"
  const char* help;
  const NumberRule* rule;                     // whole numbers where rule->integer
  double (*get)(const MeasureSettings& m);    // in the flag's unit (max_noise: percent)
  void (*set)(MeasureSettings& m, double v);  // from the flag's unit
  // The setting this one may not be below ("max_time": "min_time"): both given and the minimum above it
  // is one line and exit 2.
  const char* at_least = nullptr;
  // A floor no limit cuts (min_steps): a maximum under its default conflicts too.
  bool floor = false;
  // A case's child gets this setting only when it holds (warmup: only a fixed warm-up; by default the
  // child waits for the step time to settle); null: always.
  bool (*sent)(const MeasureSettings& m) = nullptr;
};
const std::vector<StopSetting>& stop_settings();
// The row of that name; throws std::logic_error for none (a name in the code, not a user's).
const StopSetting& stop_setting(const std::string& name);
// "--min-time" for "min_time".
std::string stop_flag(const StopSetting& s);
// The value as its flag and a suite take it: "5", "2.5".
std::string stop_value_text(const StopSetting& s, const MeasureSettings& m);

// Samples of one timed call (an operator, an allreduce): exactly `warmup_steps` calls first (not kept),
// then calls until the stopping policy is satisfied. `one()` runs one call and returns its seconds (it
// synchronises as it needs).
struct Sampled {
  std::vector<double> samples;
  std::string stop_reason;
};
Sampled sample_until_done(const MeasureSettings& m, const std::function<double()>& one);

}  // namespace trainbench
