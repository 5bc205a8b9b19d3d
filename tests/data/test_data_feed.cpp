// The input pipeline's last leg and its place in a step: every batch the loader makes is trained on
// (the first one too), explain's data-wait row on a tiny model fed by a slowed source, and the uint8
// transfer (bytes normalized on the device) against the float path, run on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/device.h"
#include "data/augment.h"
#include "data/device_feed.h"
#include "data_util.h"
#include "ops/explain.h"
#include "results/printer_ops.h"
#include "runner/measure.h"
#include "runner/plan.h"
#include "workloads/training.h"
#include "workloads/registry.h"

namespace trainbench {
namespace {

using test::FakeSource;

// A real LossWorkload (loader, device feed, optimizer step) whose "model" is one linear layer fed the
// batch's index: each forward records which batch it ran on.
class IndexTrainer final : public detail::LossWorkload {
 public:
  explicit IndexTrainer(std::shared_ptr<data::BatchSource> source) : LossWorkload(options(), "samples/s") {
    model_ = torch::nn::Linear(1, 1);
    start_loader(std::move(source));
    finish_setup(*model_, StepFlops{}, 2);
  }
  std::vector<int64_t> trained;

 protected:
  void take_batch(std::vector<torch::Tensor>& t) override { input_ = t[0]; }
  torch::Tensor forward() override {
    trained.push_back(input_.item<int64_t>());
    return model_(input_.to(torch::kFloat).view({1, 1}));
  }
  torch::Tensor loss(const torch::Tensor& out) override { return out.sum(); }

 private:
  static WorkloadOptions options() {
    WorkloadOptions o;
    o.model = "index";
    o.batch = 1;
    o.data = "fake";
    o.loader_threads = 1;
    return o;
  }
  torch::nn::Linear model_{nullptr};
  torch::Tensor input_;
};

TEST(DataFeed, EveryBatchIsTrainedOnTheFirstToo) {
  IndexTrainer w(std::make_shared<FakeSource>(0.0));
  // As the step sampler runs it: next_batch, step, next_batch, step, ...
  for (int i = 0; i < 4; ++i) {
    w.next_batch();
    w.step();
  }
  // The loader numbers its batches 0, 1, 2, ... in the order they are asked for: the batch taken at
  // setup (0) is the first step's, and none is skipped.
  EXPECT_EQ(w.trained, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(w.last_copy_wait_s(), 0.0);  // CPU: nothing to copy
  // Steps without next_batch (memory probes, layer collection) train on the batch they have; the next
  // next_batch then moves on, since that batch has been trained on.
  w.step();
  w.next_batch();
  w.step();
  EXPECT_EQ(w.trained, (std::vector<int64_t>{0, 1, 2, 3, 3, 4}));
}

// A tiny real model (synthetic convnet) whose batches come from a source slowed to `delay_s` a batch:
// the step is the model's, the wait the loader's.
class SlowlyFed final : public Workload {
 public:
  SlowlyFed(std::unique_ptr<Workload> inner, double delay_s)
      : inner_(std::move(inner)), loader_(std::make_shared<FakeSource>(delay_s), 1, 2) {}
  void next_batch() override { (void)loader_.next(); }
  void step() override { inner_->step(); }
  int64_t samples_per_step() const override { return inner_->samples_per_step(); }
  std::string unit() const override { return inner_->unit(); }
  double flops_per_step() const override { return inner_->flops_per_step(); }
  int64_t parameters() const override { return inner_->parameters(); }
  double last_loss() const override { return inner_->last_loss(); }
  std::optional<LoaderStats> loader_stats() const override { return loader_.stats(); }

 private:
  std::unique_ptr<Workload> inner_;
  data::Loader loader_;
};

TEST(ExplainData, TheDataWaitIsARowOfTheStepOfItsMeasuredSize) {
  Case c = parse_case("convnet:channels=8,depth=2,image=8,variant=separable:b2:fp32:nchw:cpu");
  validate_case(c);
  MeasureSettings m;
  // LibTorch 2.x's oneDNN makes its primitives during the first few steps, some of them longer than the
  // delay: while they run the loader fills its queue and the next steps hardly wait. Five warm-up
  // steps leave only the model's short steps to measure.
  m.warmup_steps = 5;
  m.min_steps = 6;
  m.max_steps = 6;
  m.min_time_s = 0.0;
  m.max_time_s = 5.0;
  // The loader's time per batch (one thread) must dwarf the model's own step, so that the loader sets
  // the pace: at least 60 ms, and 8 times the model's step measured alone first. On an idle machine the
  // step takes a few milliseconds. Beside another 2-thread benchmark on 2 cores, with 2 intra-op threads
  // of its own, it took 166 ms in some runs and a few in others (its threads wait for each other at
  // every operator); one intra-op thread keeps it short.
  // Put back afterwards: the tests after this one in the same binary run with the threads they expect.
  struct RestoreThreads {
    int before = at::get_num_threads();
    ~RestoreThreads() { at::set_num_threads(before); }
  } restore;
  configure_threads(1);
  const Record bare = measure_workload(c, m, [&] { return make_workload(c); });
  ASSERT_TRUE(bare.ok()) << bare.error;
  const double kDelay = std::max(0.060, 8.0 * bare.step_time_s.median);
  const Record step = measure_workload(c, m, [&] { return std::make_unique<SlowlyFed>(make_workload(c), kDelay); });
  ASSERT_TRUE(step.ok()) << step.error;
  ASSERT_TRUE(step.data.has_value());
  ExplainSettings s;
  s.c = c;
  s.op_measure = m;
  s.op_measure.min_steps = 2;
  s.op_measure.max_steps = 2;
  s.peak_gflops = NAN;
  s.try_alternatives = false;
  const Explanation e = explain_case(s, step);
  ASSERT_TRUE(e.real_data);
  // One loader thread makes a batch per delay, so no step is shorter than the delay (a loaded machine
  // stretches sleeps, never shortens them). The wait is the delay less what the tiny model's step
  // overlaps (the next batch is made while the step runs): a part of the step, and most of it. A load
  // that slows the model shrinks the wait (CI saw 19 of 30 ms), so the bounds stand on the step, not
  // on the delay alone; a wait counted twice would pass the step, a wait left out would be zero.
  EXPECT_GT(e.step_time_s, 0.9 * kDelay);
  EXPECT_LT(e.data_wait_s, e.step_time_s);
  EXPECT_GT(e.data_wait_s, e.step_time_s / 2.0);
  EXPECT_EQ(e.copy_s, 0.0);  // CPU: no device copy
  // The rest of the step is the tiny model's own work (2 images of 8x8, 8 channels: a few milliseconds
  // at most): its layers timed alone, and `other`, what the step takes beyond them and the wait. Both
  // stay far below the delay; a breakdown that left the wait in `other` (or counted it twice) would put
  // a whole delay there.
  EXPECT_LT(e.layers_time_s, kDelay / 2.0);
  EXPECT_LT(std::fabs(e.other_time_s), kDelay / 2.0);
  // The wait is most of this step, so it is a finding, and a row of the printed table.
  bool finding = false;
  for (const auto& f : e.findings) finding |= f.find("for its batch: input-bound") != std::string::npos;
  EXPECT_TRUE(finding);
  const std::string text = print_explanation(e);
  EXPECT_NE(text.find("data wait"), std::string::npos) << text;
  EXPECT_NE(text.find("device copy"), std::string::npos) << text;
  // Round trip through JSON; a file from before has no data rows.
  const Explanation back = explanation_from_json(to_json(e));
  EXPECT_EQ(back.real_data, true);
  EXPECT_EQ(back.data_wait_s, e.data_wait_s);
  auto old = to_json(e);
  old.erase("real_data");
  old.erase("data_wait_s");
  old.erase("copy_s");
  EXPECT_FALSE(explanation_from_json(old).real_data);
}

TEST(ExplainData, SyntheticDataHasNoDataRows) {
  Explanation e;
  e.case_name = "convnet:b2:fp32:nchw:cpu";
  e.step_time_s = 0.010;
  attribute(e);
  EXPECT_FALSE(e.real_data);
  EXPECT_EQ(print_explanation(e).find("data wait"), std::string::npos);
}

// The uint8 transfer crops, resizes and flips exactly as the float path and rounds to bytes; the
// device's normalize (run here on the CPU) then gives the float path's numbers within half a grey
// level: |round(v) - v| <= 0.5, times the channel's gain 1 / (255 std).
TEST(DataTransfer, Uint8NormalizedOnTheDeviceMatchesTheFloatPathWithinRounding) {
  const int w = 37, h = 29, out = 16;
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  std::mt19937 rng(7);
  for (auto& p : rgb) p = static_cast<uint8_t>(rng() % 256);
  const data::CropBox box{3.0, 2.0, 30.0, 25.0};
  for (bool channels_last : {false, true}) {
    for (bool flip : {false, true}) {
      std::vector<float> f(static_cast<size_t>(out) * out * 3);
      std::vector<uint8_t> u(f.size());
      data::crop_resize_normalize(rgb.data(), w, h, box, out, out, flip, channels_last, f.data());
      data::crop_resize_bytes(rgb.data(), w, h, box, out, out, flip, channels_last, u.data());
      // Both as (1, 3, out, out) tensors in the memory order they were written in.
      auto as_tensor = [&](torch::Tensor t) {
        return channels_last ? t.view({1, out, out, 3}).permute({0, 3, 1, 2}) : t.view({1, 3, out, out});
      };
      const torch::Tensor reference =
          as_tensor(torch::from_blob(f.data(), {static_cast<int64_t>(f.size())}, torch::kFloat));
      const torch::Tensor bytes = as_tensor(torch::from_blob(u.data(), {static_cast<int64_t>(u.size())}, torch::kByte));
      const torch::Tensor normalized = data::normalize_pixels(bytes, torch::kFloat);
      EXPECT_EQ(normalized.is_contiguous(at::MemoryFormat::ChannelsLast), channels_last);
      for (int c = 0; c < 3; ++c) {
        const double half_level = 0.5 / (255.0 * data::kImagenetStd[c]);
        const double err = (normalized[0][c] - reference[0][c]).abs().max().item<double>();
        EXPECT_LE(err, half_level + 1e-5) << "channel " << c;
      }
      // And bf16 is the float result converted, as the host path converts it.
      const torch::Tensor b16 = data::normalize_pixels(bytes, torch::kBFloat16);
      EXPECT_EQ(b16.scalar_type(), torch::kBFloat16);
      EXPECT_TRUE(b16.equal(normalized.to(torch::kBFloat16)));
    }
  }
}

// The feed on the CPU hands the batch over as it is (nothing copied, nothing waited for), normalizing a
// uint8 image batch when asked.
TEST(DataTransfer, CpuFeedPassesTheBatchThrough) {
  data::DeviceFeed feed(torch::Device(torch::kCPU), /*normalize_uint8=*/false, torch::kFloat);
  data::Batch b;
  b.tensors = {torch::arange(6).view({2, 3}), torch::ones({2}, torch::kLong)};
  const void* ptr = b.tensors[0].data_ptr();
  feed.start(b);
  EXPECT_TRUE(feed.pending());
  double wait = -1.0;
  const auto t = feed.finish(wait);
  EXPECT_EQ(wait, 0.0);
  EXPECT_FALSE(feed.pending());
  EXPECT_EQ(t[0].data_ptr(), ptr);  // the same memory: no copy on the CPU
  data::DeviceFeed bytes(torch::Device(torch::kCPU), /*normalize_uint8=*/true, torch::kFloat);
  data::Batch u;
  u.tensors = {torch::full({1, 3, 2, 2}, 255, torch::kByte), torch::zeros({1}, torch::kLong)};
  bytes.start(u);
  const auto n = bytes.finish(wait);
  // 255 is (1 - mean) / std per channel.
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(n[0][0][c][0][0].item<double>(), (1.0 - data::kImagenetMean[c]) / data::kImagenetStd[c], 1e-5);
  }
}

}  // namespace
}  // namespace trainbench
