// The fp16 loss scaler on synthetic gradients: GradScaler's defaults, scaling the loss and unscaling the
// gradients, a skipped step on inf/NaN, growth after a run of finite steps.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <limits>
#include <vector>

#include "workloads/loss_scaler.h"

namespace trainbench {
namespace {

std::vector<torch::Tensor> params_with_grads(const std::vector<float>& grads) {
  std::vector<torch::Tensor> params;
  for (float g : grads) {
    auto p = torch::ones({2}, torch::requires_grad());
    p.mutable_grad() = torch::full({2}, g);
    params.push_back(p);
  }
  return params;
}

TEST(LossScaler, DefaultsAreGradScalers) {
  const LossScalerOptions o;
  EXPECT_EQ(o.init_scale, 65536.0);
  EXPECT_EQ(o.growth_factor, 2.0);
  EXPECT_EQ(o.backoff_factor, 0.5);
  EXPECT_EQ(o.growth_interval, 2000);
  EXPECT_EQ(LossScaler().scale_value(), 65536.0);
}

TEST(LossScaler, ScalesTheLossAndUnscalesTheGradients) {
  LossScaler s;
  EXPECT_FLOAT_EQ(s.scale(torch::tensor(0.5f)).item<float>(), 32768.0f);
  auto params = params_with_grads({65536.0f, -131072.0f});
  EXPECT_TRUE(s.unscale(params));
  EXPECT_FLOAT_EQ(params[0].grad()[0].item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(params[1].grad()[1].item<float>(), -2.0f);
}

TEST(LossScaler, InfOrNanSkipsTheStepAndBacksOff) {
  for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    LossScaler s;
    auto params = params_with_grads({1.0f, bad});
    torch::optim::SGD sgd(params, torch::optim::SGDOptions(0.1));
    EXPECT_FALSE(s.step(sgd, params));
    EXPECT_TRUE(torch::equal(params[0].detach(), torch::ones({2}))) << "the optimizer step must not run";
    EXPECT_EQ(s.scale_value(), 32768.0);
    EXPECT_EQ(s.skipped_steps(), 1);
    EXPECT_EQ(s.growth_tracker(), 0);
  }
}

TEST(LossScaler, GrowsAfterGrowthIntervalFiniteStepsInARow) {
  LossScalerOptions o;
  o.init_scale = 1024.0;
  o.growth_interval = 3;
  LossScaler s(o);
  auto params = params_with_grads({1024.0f});
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(0.5));
  EXPECT_TRUE(s.step(sgd, params));
  EXPECT_FLOAT_EQ(params[0][0].item<float>(), 0.5f) << "1 - 0.5 * (1024 / 1024)";
  s.update(false);
  EXPECT_EQ(s.scale_value(), 1024.0) << "2 of 3";
  s.update(true);  // an overflow restarts the count
  EXPECT_EQ(s.scale_value(), 512.0);
  for (int i = 0; i < 2; ++i) s.update(false);
  EXPECT_EQ(s.scale_value(), 512.0);
  s.update(false);
  EXPECT_EQ(s.scale_value(), 1024.0);
  EXPECT_EQ(s.growth_tracker(), 0);
  EXPECT_EQ(s.skipped_steps(), 1);
}

}  // namespace
}  // namespace trainbench
