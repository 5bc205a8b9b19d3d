// Precisions as far as a CPU can train them: the pure types, the dtype conversion that keeps integer
// buffers, bf16-pure training, and fp16 refused without a GPU.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <string>

#include "core/device.h"
#include "core/precision.h"
#include "workloads/training.h"
#include "workloads/workload.h"
#include "workloads/registry.h"

namespace trainbench {
namespace {

WorkloadOptions tiny(const std::string& model, const std::string& precision) {
  WorkloadOptions o;
  o.model = model;
  o.batch = 2;
  o.precision = parse_precision(precision);
  if (model == "convnet") o.params = {{"channels", "4"}, {"depth", "2"}, {"image", "8"}};
  if (model == "bilstm") o.params = {{"vocab", "50"}, {"embed", "8"}, {"hidden", "8"}, {"seq", "6"}};
  if (model == "bert") o.params = {{"layers", "1"}, {"hidden", "32"}, {"heads", "2"}, {"vocab", "50"}, {"seq", "8"}};
  return o;
}

TEST(Precision, KnownPrecisionsNameThePureTypes) {
  EXPECT_EQ(precision_names(), (std::vector<std::string>{"fp32", "fp16", "bf16", "fp16-pure", "bf16-pure"}));
  EXPECT_TRUE(parse_precision("bf16-pure").pure);
  EXPECT_FALSE(parse_precision("bf16").pure);
  EXPECT_EQ(torch_dtype(parse_precision("fp16-pure")), at::kHalf);
  EXPECT_EQ(torch_dtype(parse_precision("bf16")), at::kBFloat16);
  EXPECT_EQ(torch_dtype(parse_precision("fp32")), at::kFloat);
  for (const auto& name : precision_names()) EXPECT_EQ(parse_precision(name).str(), name);
  EXPECT_EQ(layout_names(), (std::vector<std::string>{"nchw", "nhwc"}));
  for (const auto& name : layout_names()) EXPECT_EQ(to_string(parse_layout(name)), name);
  EXPECT_THROW(parse_layout("nwhc"), std::invalid_argument);
}

TEST(Precision, ToDtypeConvertsFloatsAndKeepsIntegerBuffers) {
  torch::nn::BatchNorm2d bn(4);
  detail::to_dtype(*bn, at::kBFloat16);
  EXPECT_EQ(bn->weight.scalar_type(), at::kBFloat16);
  EXPECT_EQ(bn->running_mean.scalar_type(), at::kBFloat16);
  EXPECT_EQ(bn->num_batches_tracked.scalar_type(), at::kLong);
}

TEST(Precision, Bf16PureTrainsOnCpu) {
  for (const std::string model : {"convnet", "bert", "resnet18"}) {
    SCOPED_TRACE(model);
    auto o = tiny(model, "bf16-pure");
    if (model == "resnet18") o.batch = 1;  // a zoo CNN: BatchNorm buffers and a converted image input
    auto w = make_workload(o);
    w->step();
    w->step();
    EXPECT_TRUE(std::isfinite(w->last_loss()));
    EXPECT_EQ(w->skipped_steps(), 0);
    EXPECT_TRUE(std::isnan(w->loss_scale())) << "no loss scaling outside fp16 mixed precision";
    // Forward-only: the step runs in the pure type and leaves the weights untouched (no optimizer).
    o.forward_only = true;
    auto f = make_workload(o);
    std::vector<torch::Tensor> before;
    for (const auto& p : f->trainable_parameters()) before.push_back(p.detach().clone());
    ASSERT_FALSE(before.empty());
    EXPECT_EQ(before.front().scalar_type(), at::kBFloat16);
    f->step();
    f->step();
    const auto after = f->trainable_parameters();
    for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i], after[i])) << "parameter " << i;
  }
}

TEST(Precision, Fp16KindsNeedAGpu) {
  for (const std::string p : {"fp16", "fp16-pure"}) {
    try {
      make_workload(tiny("convnet", p));
      ADD_FAILURE() << p << " ran on CPU";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("needs a GPU"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace trainbench
