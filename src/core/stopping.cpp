#include "core/stopping.h"

#include "core/statistics.h"

namespace trainbench {

bool MaxNoise::satisfied(const Progress& p) const { return relative_noise_of_median(p.samples) <= max_; }

StoppingPolicy& StoppingPolicy::require(std::unique_ptr<StoppingRule> rule) {
  requirements_.push_back(std::move(rule));
  return *this;
}

StoppingPolicy& StoppingPolicy::limit(std::unique_ptr<StoppingRule> rule) {
  limits_.push_back(std::move(rule));
  return *this;
}

bool StoppingPolicy::done(const Progress& p) {
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

StoppingPolicy MeasureSettings::policy() const {
  StoppingPolicy p;
  p.require(std::make_unique<MinSteps>(min_steps))
      .require(std::make_unique<MinTime>(min_time_s))
      .require(std::make_unique<MaxNoise>(max_noise))
      .limit(std::make_unique<MaxTime>(max_time_s))
      .limit(std::make_unique<MaxSteps>(max_steps));
  return p;
}

}  // namespace trainbench
