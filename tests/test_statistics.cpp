#include <gtest/gtest.h>

#include <cmath>

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
  EXPECT_TRUE(std::isinf(relative_noise_of_median({0.5})));
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
  m.max_steps = 4;
  m.max_noise = 0.0;
  StoppingPolicy p = m.policy();
  const std::vector<double> s = {1, 2, 3, 4};
  EXPECT_TRUE(p.done({s, 0.0}));
  EXPECT_EQ(p.reason(), "max_steps");
}

}  // namespace
}  // namespace trainbench
