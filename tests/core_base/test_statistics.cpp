#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "core/statistics.h"
#include "core/stopping.h"

namespace trainbench {
namespace {

TEST(Statistics, SummaryOfKnownSamples) {
  const std::vector<double> xs = {1.0, 2.0, 3.0, 4.0, 100.0};
  const Summary s = summarize(xs);
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.mean, 22.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 100.0);
  // deviations from the median: 2,1,0,1,97 -> MAD 1 -> jitter 1.4826
  EXPECT_DOUBLE_EQ(s.jitter, 1.4826);
  // sample variance: (21^2+20^2+19^2+18^2+78^2)/4 = 7610/4
  EXPECT_NEAR(s.stddev, std::sqrt(7610.0 / 4.0), 1e-12);
}

TEST(Statistics, EvenCountMedianAveragesTheMiddlePair) {
  EXPECT_DOUBLE_EQ(median_of({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({}), 0.0);
}

TEST(Statistics, EmptyAndSingleSample) {
  EXPECT_EQ(summarize({}).n, 0);
  const Summary one = summarize({0.5});
  EXPECT_DOUBLE_EQ(one.median, 0.5);
  EXPECT_DOUBLE_EQ(one.stddev, 0.0);
  EXPECT_TRUE(std::isinf(relative_noise_of_median(std::vector<double>{0.5})));
}

TEST(Statistics, RelativeNoiseShrinksWithMoreSamples) {
  std::vector<double> few = {1.0, 1.1, 0.9, 1.05, 0.95};
  std::vector<double> many;
  for (int i = 0; i < 20; ++i) many.insert(many.end(), few.begin(), few.end());
  const double n_few = relative_noise_of_median(few);
  const double n_many = relative_noise_of_median(many);
  EXPECT_GT(n_few, 0.0);
  EXPECT_NEAR(n_many, n_few / std::sqrt(20.0), 1e-12);  // 20x the samples, same spread
}

TEST(Stopping, WaitsForEveryRequirement) {
  MeasureSettings m;
  m.min_steps = 3;
  m.min_time_s = 1.0;
  m.max_noise = 0.5;
  m.max_time_s = 10.0;
  StoppingPolicy p = m.policy();
  std::vector<double> s = {0.1, 0.1};
  EXPECT_FALSE(p.done({s, 5.0}));  // too few steps
  s.push_back(0.1);
  EXPECT_FALSE(p.done({s, 0.5}));  // too little time
  EXPECT_TRUE(p.done({s, 1.5}));
  EXPECT_EQ(p.reason(), "converged");
}

TEST(Stopping, NoisyRunsContinueUntilMaxTime) {
  MeasureSettings m;
  m.min_steps = 2;
  m.min_time_s = 0.0;
  m.max_noise = 0.001;
  m.max_time_s = 3.0;
  StoppingPolicy p = m.policy();
  const std::vector<double> s = {0.1, 0.3, 0.2, 0.5, 0.1};
  EXPECT_FALSE(p.done({s, 2.9}));
  EXPECT_TRUE(p.done({s, 3.0}));
  EXPECT_EQ(p.reason(), "max_time");
}

TEST(Stopping, MaxStepsIsALimit) {
  MeasureSettings m;
  m.min_steps = 2;
  m.max_steps = 4;
  m.max_noise = 0.0;
  StoppingPolicy p = m.policy();
  const std::vector<double> s = {1, 2, 3, 4};
  EXPECT_TRUE(p.done({s, 0.0}));
  EXPECT_EQ(p.reason(), "max_steps");
}

TEST(Stopping, NoLimitCutsTheMinimumSteps) {
  // Seen on a slow machine: --max-time ended a case after 2 steps at 25% noise. The minimum is a floor.
  MeasureSettings m;
  m.min_steps = 5;
  m.min_time_s = 0.0;
  m.max_time_s = 1.0;
  m.max_steps = 3;  // a conflicting limit (the CLI refuses it) still cannot cut the floor
  StoppingPolicy p = m.policy();
  std::vector<double> s = {2.0, 2.5};
  EXPECT_FALSE(p.done({s, 100.0}));
  s.insert(s.end(), {2.1, 2.7});
  EXPECT_FALSE(p.done({s, 100.0}));
  s.push_back(2.2);
  EXPECT_TRUE(p.done({s, 100.0}));
  EXPECT_EQ(p.reason(), "max_time");
}

TEST(Stopping, NoiseTargetMetComparesTheMediansNoise) {
  MeasureSettings m;
  m.max_noise = 0.02;
  // 1, 1.1, 0.9, 1.05, 0.95: median 1, |dev| 0,.1,.1,.05,.05 -> MAD 0.05, jitter 0.07413;
  // noise = 1.2533 * 0.07413 / sqrt(5) / 1 = 0.04155: over 2%, under 5%.
  const Summary s = summarize({1.0, 1.1, 0.9, 1.05, 0.95});
  EXPECT_NEAR(s.median_noise, 1.2533141373155 * 1.4826 * 0.05 / std::sqrt(5.0), 1e-12);
  EXPECT_FALSE(m.noise_target_met(s));
  m.max_noise = 0.05;
  EXPECT_TRUE(m.noise_target_met(s));
}

TEST(Statistics, Lag1AutocorrelationOfKnownSeries) {
  // 1..5: deviations -2,-1,0,1,2; sum of neighbour products 2+0+0+2 = 4; sum of squares 10.
  EXPECT_NEAR(lag1_autocorrelation({1, 2, 3, 4, 5}), 0.4, 1e-12);
  // 1,3,1,3: deviations -1,1,-1,1; products -1,-1,-1 = -3; squares 4.
  EXPECT_NEAR(lag1_autocorrelation({1, 3, 1, 3}), -0.75, 1e-12);
  EXPECT_NEAR(summarize({1, 2, 3, 4, 5}).lag1_autocorrelation, 0.4, 1e-12);
  EXPECT_TRUE(std::isnan(lag1_autocorrelation({1, 2})));
  EXPECT_TRUE(std::isnan(lag1_autocorrelation({2, 2, 2})));
}

TEST(Warmup, AHugeCountIsBoundedByTime) {
  MeasureSettings m;
  m.warmup_steps = 99999999999L;
  m.max_time_s = 1.0;
  const WarmupRule cpu = m.warmup(false);
  const std::vector<double> one = {0.6};
  EXPECT_FALSE(cpu.done({one, 0.6}));
  EXPECT_TRUE(cpu.done({one, 1.2}));
  EXPECT_TRUE(m.warmup(true).done({one, 1.2}));
  const std::vector<double> none;
  EXPECT_FALSE(cpu.done({none, 5.0})) << "at least one warm-up step runs";
}

TEST(Stopping, SamplingBoundsAHugeWarmupToo) {
  MeasureSettings m;
  m.warmup_steps = 99999999999L;
  m.min_steps = 3;
  m.min_time_s = 0.0;
  m.max_time_s = 0.05;
  long calls = 0;
  const Sampled s = sample_until_done(m, [&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return 0.002;
  });
  EXPECT_GE(s.samples.size(), 3u);
  EXPECT_LT(calls, 1000) << "warm-up ended by time, not by its count";
}

}  // namespace
}  // namespace trainbench
