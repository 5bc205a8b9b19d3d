// A step's census (ops/census.h) on real workloads, against references taken independently: the
// FLOP counter's totals (core/flops.h, read from the same step by another observer), layer shapes worked
// out by hand, and autocast's documented type rules.
#include <gtest/gtest.h>

#include <map>

#include "ops/census.h"
#include "predict/method.h"
#include "workloads/workload.h"
#include "workloads/registry.h"

namespace trainbench {
namespace {

WorkloadOptions options_for(const std::string& model, std::map<std::string, std::string> params = {}) {
  WorkloadOptions o;
  o.model = model;
  o.params = std::move(params);
  o.batch = 1;
  return o;
}

double sum(const std::vector<predict::CensusOp>& ops, double predict::CensusOp::*member) {
  double s = 0.0;
  for (const auto& o : ops) s += o.*member;
  return s;
}

// Every product's FLOPs, by phase, add up to what the workload's own FLOP counter reads for the same
// batch (the counter runs its own observer over a forward with gradients).
TEST(Census, ProductFlopsAddUpToTheFlopCounters) {
  for (const char* model : {"resnet18", "mobilenet_v2"}) {
    SCOPED_TRACE(model);
    const auto c = take_census(options_for(model), 1, 2);
    WorkloadOptions o = options_for(model);
    o.batch = 3;
    const StepFlops want = make_workload(o)->step_flops();
    const auto ops = c.ops_at(3);
    EXPECT_NEAR(sum(ops, &predict::CensusOp::flops_fwd), want.forward, 1e-6 * want.forward);
    EXPECT_NEAR(sum(ops, &predict::CensusOp::flops_bwd_data), want.backward_data, 1e-6 * want.backward_data);
    EXPECT_NEAR(sum(ops, &predict::CensusOp::flops_bwd_weights), want.backward_weights, 1e-6 * want.backward_weights);
    EXPECT_EQ(c.ops1.size(), c.ops2.size());
  }
}

// resnet18's first convolution, 7x7 stride 2 from 3x224x224 to 64x112x112, moves its input, weight and
// output once in one kernel; every CNN output but the loss's is 16-bit under autocast (convolutions,
// batch norms on a 16-bit input, ReLUs and sums of 16-bit tensors); the loss runs in fp32 on an fp32 copy
// of the 1000 logits.
TEST(Census, ShapesKernelsAndAutocastTypesOfACnn) {
  const auto c = take_census(options_for("resnet18"), 1, 2);
  const auto& conv1 = c.ops1.front();
  EXPECT_EQ(conv1.op_class, predict::OpClass::conv);
  EXPECT_EQ(conv1.kernels, 1);
  EXPECT_DOUBLE_EQ(conv1.act_elems, 3.0 * 224 * 224 + 64.0 * 112 * 112);
  EXPECT_DOUBLE_EQ(conv1.weight_elems, 64.0 * 3 * 7 * 7);
  EXPECT_DOUBLE_EQ(conv1.gemm_m, 112.0 * 112);
  EXPECT_DOUBLE_EQ(conv1.gemm_n, 64.0);
  EXPECT_DOUBLE_EQ(conv1.flops_bwd_data, 0.0) << "the input batch needs no gradient";
  for (const auto& o : c.ops1) {
    if (o.name == "aten::cross_entropy_loss") {
      EXPECT_TRUE(o.out_wide);
      EXPECT_DOUBLE_EQ(o.cast_elems, 1000.0);
    } else {
      EXPECT_FALSE(o.out_wide) << o.name;
    }
  }
  EXPECT_NEAR(c.autocast_activation_ratio(), 0.5, 1e-3);
  EXPECT_GT(c.activation_bytes_per_sample(), 0.0);
  EXPECT_EQ(c.parameter_tensors, 62);  // 20 convolutions, 20 batch norms x 2, fc weight and bias
  EXPECT_EQ(c.parameters, 11689512);   // torchvision's resnet18
}

// A tiny BERT, its attention written out (LibTorch 1.13's only form; 2.x's default sdpa is one
// operator): layer norms, the loss and the sums with the fp32 residual stream are fp32 under autocast,
// the linear layers' outputs 16-bit; dropout is one kernel with a one-byte mask; the attention core is
// one fused kernel that, written out, keeps the probabilities, the dropout's output and mask.
TEST(Census, AutocastTypesDropoutAndAttentionOfATransformer) {
  const int64_t h = 32, t = 8, heads = 2;
  const auto c = take_census(options_for("bert", {{"layers", "1"},
                                                  {"hidden", std::to_string(h)},
                                                  {"heads", std::to_string(heads)},
                                                  {"vocab", "50"},
                                                  {"seq", std::to_string(t)}, {"attention", "math"}}),
                             1, 2);
  int layer_norms = 0, linears = 0, attentions = 0;
  for (const auto& o : c.ops1) {
    if (o.name == "aten::embedding") {
      EXPECT_TRUE(o.out_wide) << "an embedding has its fp32 table's type";
    }
    if (o.name == "aten::layer_norm") {
      ++layer_norms;
      EXPECT_TRUE(o.out_wide);
    }
    if (o.name == "aten::linear") {
      ++linears;
      EXPECT_FALSE(o.out_wide);
    }
    if (o.name == "aten::dropout" && o.out_elems == static_cast<double>(t * h)) {
      EXPECT_EQ(o.kernels, 1);
      EXPECT_DOUBLE_EQ(o.act_elems, 2.0 * t * h);
      EXPECT_DOUBLE_EQ(o.other_bytes, static_cast<double>(t * h));
    }
    if (o.name == "trainbench::attention") {
      ++attentions;
      EXPECT_EQ(o.kernels, 1);
      EXPECT_DOUBLE_EQ(o.act_elems, 4.0 * t * h);  // q, k, v in, the output out
      // softmax's output, and dropout's output and mask: 3 x heads x t x t at batch 1.
      EXPECT_DOUBLE_EQ(o.math_saved_elems, 3.0 * heads * t * t);
      EXPECT_GT(o.math_kernels, 3);
    }
  }
  EXPECT_EQ(layer_norms, 4);  // embeddings, after attention, after the feed-forward, the MLM transform
  EXPECT_EQ(attentions, 1);
  EXPECT_GE(linears, 8);  // q, k, v, output, two feed-forward, pooler, MLM transform, decoder, next sentence
  const double r = c.autocast_activation_ratio();
  EXPECT_GT(r, 0.5);
  EXPECT_LT(r, 1.0);
}

}  // namespace
}  // namespace trainbench
