// `trainbench list`'s counts of a deep model: counted at one block and at two and extrapolated
// (workloads/model_counts.h). The reference is the same model built whole at its full depth and counted
// directly (its parameters and its step's FLOPs), for each workload whose blocks are alike: llama, gpt,
// bert and the biLSTM (whose first layer differs from the rest). Every model here is tiny.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "workloads/model_counts.h"
#include "workloads/registry.h"

namespace trainbench {
namespace {

void expect_same_counts(const std::string& model, const Params& given, int64_t depth) {
  SCOPED_TRACE(model);
  const WorkloadInfo* w = find_workload(model);
  ASSERT_NE(w, nullptr);
  const Params all = effective_params(*w, given);
  ASSERT_TRUE(w->depth);
  EXPECT_EQ(w->depth(all), depth);
  const ModelCounts whole = count_whole(*w, all);  // the direct path: every block built
  const ModelCounts extrapolated = count_model(*w, all);
  EXPECT_EQ(extrapolated.parameters, whole.parameters);
  // The FLOPs are sums of per-layer products of whole numbers: equal but for the order of the additions.
  EXPECT_NEAR(extrapolated.forward_flops, whole.forward_flops, 1e-9 * whole.forward_flops);
  EXPECT_NEAR(extrapolated.training_flops, whole.training_flops, 1e-9 * whole.training_flops);
  EXPECT_GT(whole.training_flops, 2.5 * whole.forward_flops);  // a training step was counted, not a forward
}

TEST(ModelCounts, ADeepModelCountedAtOneAndTwoBlocksEqualsTheWholeModel) {
  expect_same_counts("llama", {{"size", "smollm2-135m"}, {"layers", "5"}, {"vocab", "300"}, {"seq", "16"}}, 5);
  expect_same_counts("gpt", {{"layers", "4"}, {"hidden", "64"}, {"vocab", "300"}, {"seq", "16"}, {"max_pos", "16"}}, 4);
  expect_same_counts("bert", {{"layers", "3"}, {"hidden", "64"}, {"heads", "4"}, {"vocab", "300"}, {"seq", "16"}}, 3);
  expect_same_counts("bilstm", {{"layers", "4"}, {"embed", "24"}, {"hidden", "16"}, {"vocab", "300"}, {"seq", "8"}}, 4);
}

TEST(ModelCounts, TheDepthOfASizeIsTheSizes) {
  // GPT-2 medium has 24 blocks, Llama 3.2 1B 16 (their published configurations); layers overrides.
  const WorkloadInfo* gpt = find_workload("gpt");
  const WorkloadInfo* llama = find_workload("llama");
  ASSERT_TRUE(gpt && llama);
  EXPECT_EQ(gpt->depth(effective_params(*gpt, {{"size", "medium"}})), 24);
  EXPECT_EQ(llama->depth(effective_params(*llama, {})), 16);
  EXPECT_EQ(llama->depth(effective_params(*llama, {{"layers", "3"}})), 3);
}

TEST(ModelCounts, ExtrapolationAddsWhatTheSecondBlockAdded) {
  // Worked by hand: a first block of 10 over a base of 100, each later one 7.
  const ModelCounts one{110, 20.0, 60.0}, two{117, 23.0, 69.0};
  const ModelCounts four = count_by_depth(one, two, 4);
  EXPECT_EQ(four.parameters, 131);
  EXPECT_DOUBLE_EQ(four.forward_flops, 29.0);
  EXPECT_DOUBLE_EQ(four.training_flops, 87.0);
}

}  // namespace
}  // namespace trainbench
