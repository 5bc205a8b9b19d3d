// The warm-up rule: a fixed count runs exactly its steps; on a GPU it waits until step times settle.
#include <gtest/gtest.h>

#include <vector>

#include "core/stopping.h"

namespace trainbench {
namespace {

bool warm_done(const WarmupRule& r, const std::vector<double>& s, double elapsed = 0.0) { return r.done({s, elapsed}); }

TEST(WarmupRule, FixedRunsExactlyTheSteps) {
  EXPECT_TRUE(warm_done(WarmupRule::fixed(0), {}));
  EXPECT_FALSE(warm_done(WarmupRule::fixed(2), {9.0}));
  EXPECT_TRUE(warm_done(WarmupRule::fixed(2), {9.0, 9.0}));
}

TEST(WarmupRule, OnAGpuWaitsUntilStepTimesSettle) {
  const WarmupRule r = WarmupRule::until_stable(2, 100.0);
  // Algorithm search makes the first steps slow; five steps within 10% of their median end it.
  std::vector<double> s = {5.0, 3.0, 1.0, 1.05, 0.98, 1.0};
  EXPECT_FALSE(warm_done(r, s)) << "3.0 is still in the window";
  s.push_back(1.02);
  EXPECT_TRUE(warm_done(r, s));
  EXPECT_FALSE(warm_done(WarmupRule::until_stable(8, 100.0), s)) << "at least --warmup steps";
  EXPECT_TRUE(warm_done(r, {5.0, 3.0, 1.0}, 100.0)) << "the time limit ends a warm-up that never settles";
  EXPECT_TRUE(warm_done(WarmupRule::until_stable(1, 100.0, 5, 0.1, 3), {5.0, 3.0, 1.0})) << "step limit";
  MeasureSettings m;
  m.warmup_steps = 1;
  EXPECT_FALSE(warm_done(m.warmup(false), {7.0})) << "CPU too waits for the step time by default";
  EXPECT_TRUE(warm_done(m.warmup(false), {7.0, 3.0, 1.0, 1.02, 0.99})) << "CPU: the last 3 within 10%";
  EXPECT_FALSE(warm_done(m.warmup(false, 3), {7.0, 3.0, 1.0, 1.02, 0.99})) << "the workload's 3, then 3 more";
  EXPECT_TRUE(warm_done(m.warmup(false, 3), {7.0, 3.0, 1.0, 1.02, 0.99, 1.0}));
  EXPECT_FALSE(warm_done(m.warmup(true), {7.0, 3.0, 1.0, 1.02, 0.99})) << "GPU: the last 5";
  m.warmup_fixed = true;
  EXPECT_TRUE(warm_done(m.warmup(false), {7.0})) << "--warmup 1: exactly one";
  EXPECT_TRUE(warm_done(m.warmup(true), {7.0}));
}

}  // namespace
}  // namespace trainbench
