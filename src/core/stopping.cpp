#include "core/stopping.h"

#include "core/statistics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace trainbench {

bool MaxNoise::satisfied(const Progress& p) const { return relative_noise_of_median(p.samples) <= max_; }

StoppingPolicy& StoppingPolicy::floor(std::unique_ptr<StoppingRule> rule) {
  floors_.push_back(std::move(rule));
  return *this;
}

StoppingPolicy& StoppingPolicy::require(std::unique_ptr<StoppingRule> rule) {
  requirements_.push_back(std::move(rule));
  return *this;
}

StoppingPolicy& StoppingPolicy::limit(std::unique_ptr<StoppingRule> rule) {
  limits_.push_back(std::move(rule));
  return *this;
}

bool StoppingPolicy::done(const Progress& p) {
  for (const auto& f : floors_) {
    if (!f->satisfied(p)) return false;
  }
  for (const auto& l : limits_) {
    if (l->satisfied(p)) {
      reason_ = l->name();
      return true;
    }
  }
  for (const auto& r : requirements_) {
    if (!r->satisfied(p)) return false;
  }
  reason_ = "converged";
  return true;
}

const std::vector<StopSetting>& stop_settings() {
  static const std::vector<StopSetting> rows = {
      {"warmup",
       "Exactly this many warm-up steps before timing (default: at least 2, then until the step time settles)",
       &kWarmupSteps, [](const MeasureSettings& m) { return static_cast<double>(m.warmup_steps); },
       [](MeasureSettings& m, double v) {
         m.warmup_steps = static_cast<long>(v);
         m.warmup_fixed = true;
       },
       nullptr, false, [](const MeasureSettings& m) { return m.warmup_fixed; }},
      {"min_steps", "Measure at least this many steps", &kStepCount,
       [](const MeasureSettings& m) { return static_cast<double>(m.min_steps); },
       [](MeasureSettings& m, double v) { m.min_steps = static_cast<long>(v); }, nullptr, true},
      {"max_steps", "Stop measuring a case after this many steps", &kStepCount,
       [](const MeasureSettings& m) { return static_cast<double>(m.max_steps); },
       [](MeasureSettings& m, double v) { m.max_steps = static_cast<long>(v); }, "min_steps"},
      {"min_time", "Measure for at least this many seconds", &kSeconds,
       [](const MeasureSettings& m) { return m.min_time_s; }, [](MeasureSettings& m, double v) { m.min_time_s = v; }},
      {"max_time", "Stop measuring a case after this many seconds", &kSecondsPositive,
       [](const MeasureSettings& m) { return m.max_time_s; }, [](MeasureSettings& m, double v) { m.max_time_s = v; },
       "min_time"},
      {"max_noise", "Stop once the median's relative noise is under PCT percent", &kNoisePercent,
       [](const MeasureSettings& m) { return 100.0 * m.max_noise; },
       [](MeasureSettings& m, double v) { m.max_noise = v / 100.0; }},
  };
  return rows;
}

const StopSetting& stop_setting(const std::string& name) {
  for (const auto& s : stop_settings()) {
    if (name == s.name) return s;
  }
  throw std::logic_error("no stopping setting '" + name + "'");
}

std::string stop_flag(const StopSetting& s) {
  std::string flag = std::string("--") + s.name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string stop_value_text(const StopSetting& s, const MeasureSettings& m) {
  const double v = s.get(m);
  if (s.rule->integer) return std::to_string(static_cast<long long>(v));
  return fmt::format("{}", v);  // the shortest text that reads back as the same double
}

StoppingPolicy MeasureSettings::policy() const {
  StoppingPolicy p;
  p.floor(std::make_unique<MinSteps>(min_steps))
      .require(std::make_unique<MinTime>(min_time_s))
      .require(std::make_unique<MaxNoise>(max_noise))
      .limit(std::make_unique<MaxTime>(max_time_s))
      .limit(std::make_unique<MaxSteps>(max_steps));
  return p;
}

WarmupRule WarmupRule::fixed(long steps, double max_time_s) {
  WarmupRule r;
  r.min_steps_ = r.max_steps_ = steps;
  r.max_time_s_ = max_time_s;
  return r;
}

WarmupRule WarmupRule::until_stable(long min_steps, double max_time_s, long window, double tolerance, long max_steps) {
  WarmupRule r;
  r.min_steps_ = min_steps;
  r.window_ = std::max(1L, window);
  r.tolerance_ = tolerance;
  r.max_steps_ = std::max(min_steps, max_steps);
  r.max_time_s_ = max_time_s;
  return r;
}

bool WarmupRule::done(const Progress& p) const {
  const long n = static_cast<long>(p.samples.size());
  if (n >= 1 && max_time_s_ > 0 && p.elapsed_s >= max_time_s_) return true;
  if (n < min_steps_) return false;
  if (window_ == 0 || n >= max_steps_ || (max_time_s_ > 0 && p.elapsed_s >= max_time_s_)) return true;
  if (n < window_) return false;
  std::vector<double> last(p.samples.end() - window_, p.samples.end());
  std::sort(last.begin(), last.end());
  const double median = last[last.size() / 2];
  return median > 0 && (last.back() - median) <= tolerance_ * median && (median - last.front()) <= tolerance_ * median;
}

WarmupRule MeasureSettings::warmup(bool gpu, long workload_min_steps) const {
  if (warmup_fixed) return WarmupRule::fixed(warmup_steps, max_time_s);
  // The workload's own steps are waited out, and the window that shows the time settled comes after
  // them: equal slow steps (a profiling executor's) would look settled to any window inside them.
  const long window = gpu ? 5 : 3;
  const long at_least = std::max(warmup_steps, workload_min_steps > 0 ? workload_min_steps + window : 0L);
  return WarmupRule::until_stable(at_least, max_time_s, window, 0.10);
}

bool MeasureSettings::noise_target_met(const Summary& s) const { return relative_noise_of_median(s) <= max_noise; }

Sampled sample_until_done(const MeasureSettings& m, const std::function<double()>& one) {
  using Clock = std::chrono::steady_clock;
  {
    const WarmupRule warmup = WarmupRule::fixed(m.warmup_steps, m.max_time_s);
    std::vector<double> warm;
    const auto warm_start = Clock::now();
    while (!warmup.done({warm, std::chrono::duration<double>(Clock::now() - warm_start).count()}))
      warm.push_back(one());
  }
  StoppingPolicy policy = m.policy();
  Sampled out;
  const auto start = Clock::now();
  while (true) {
    out.samples.push_back(one());
    if (policy.done({out.samples, std::chrono::duration<double>(Clock::now() - start).count()})) break;
  }
  out.stop_reason = policy.reason();
  return out;
}

}  // namespace trainbench
