// The memory accounting: the counting CPU allocator (exact, thread-safe), the phase breakdown of a
// tiny MLP against bytes worked out by hand from its shapes, the fit model on synthetic points, and
// memory sizes as people write them.
#include <gtest/gtest.h>

#include <torch/torch.h>
#include <c10/core/CPUAllocator.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "cli_util.h"
#include "core/value_rules.h"
#include "core/counting_allocator.h"
#include "memory/fit.h"
#include "results/results_file.h"
#include "results/number_format.h"
#include "runner/measure.h"
#include "runner/plan.h"
#include "workloads/training.h"

namespace trainbench {
namespace {

TEST(CountingAllocator, CountsAKnownAllocationExactly) {
  memory::CountingAllocator& counter = memory::install_counting_allocator();
  const int64_t before = counter.current_bytes();
  const int64_t total_before = counter.allocated_bytes_total();
  const int64_t blocks_before = counter.live_blocks();
  counter.reset_peak();
  {
    // 1000 floats and 300 doubles: 4000 + 2400 bytes, two blocks.
    const auto a = torch::empty({1000}, torch::kFloat);
    const auto b = torch::empty({10, 30}, torch::kDouble);
    EXPECT_EQ(counter.current_bytes() - before, 6400);
    EXPECT_EQ(counter.live_blocks() - blocks_before, 2);
    const auto view = a.narrow(0, 10, 100);  // a view shares a's storage: no allocation
    EXPECT_EQ(counter.current_bytes() - before, 6400);
  }
  EXPECT_EQ(counter.current_bytes(), before);
  EXPECT_EQ(counter.live_blocks(), blocks_before);
  EXPECT_EQ(counter.peak_bytes() - before, 6400);
  EXPECT_EQ(counter.allocated_bytes_total() - total_before, 6400);
}

TEST(CountingAllocator, IsTheAllocatorLibTorchUses) {
  memory::CountingAllocator& counter = memory::install_counting_allocator();
  EXPECT_EQ(c10::GetCPUAllocator(), &counter);
  EXPECT_EQ(&memory::install_counting_allocator(), &counter);  // installed once
  const int64_t before = counter.current_bytes();
  // An op's output comes from it too: a 64 x 64 float product is 16384 bytes.
  const auto x = torch::ones({64, 64});
  const auto y = torch::mm(x, x);
  EXPECT_EQ(counter.current_bytes() - before, 2 * 64 * 64 * 4);
}

TEST(CountingAllocator, ManyThreadsAllocatingAtOnceKeepExactCounts) {
  memory::CountingAllocator& counter = memory::install_counting_allocator();
  const int64_t before = counter.current_bytes();
  counter.reset_peak();
  constexpr int kThreads = 8, kHeld = 16, kChurn = 2000;
  constexpr int64_t kBytes = 4096;  // each held tensor: 1024 floats
  std::atomic<int> holding{0};
  std::atomic<bool> release{false};
  std::atomic<int64_t> seen_while_all_hold{-1};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<torch::Tensor> held;
      for (int i = 0; i < kChurn; ++i) {
        // Allocate and free blocks of varied sizes while the others do the same.
        auto tmp = torch::empty({1 + (i * 7 + t) % 300}, torch::kFloat);
        if (i % (kChurn / kHeld) == 0) held.push_back(torch::empty({kBytes / 4}, torch::kFloat));
      }
      ASSERT_EQ(held.size(), static_cast<size_t>(kHeld));
      if (holding.fetch_add(1) + 1 == kThreads) seen_while_all_hold = counter.current_bytes();
      while (!release.load()) std::this_thread::yield();
    });
  }
  while (holding.load() < kThreads) std::this_thread::yield();
  const int64_t all_held = counter.current_bytes();
  release = true;
  for (auto& th : threads) th.join();
  // While every thread held its tensors (and nothing else was live), exactly their bytes were counted.
  EXPECT_EQ(all_held - before, int64_t{kThreads} * kHeld * kBytes);
  EXPECT_EQ(seen_while_all_hold.load() - before, int64_t{kThreads} * kHeld * kBytes);
  EXPECT_EQ(counter.current_bytes(), before);
  EXPECT_GE(counter.peak_bytes() - before, int64_t{kThreads} * kHeld * kBytes);
}

// A loader thread's tensors are the loader's until the model takes them: 1000 floats (4000 bytes) made
// under ScopedMemoryOwner(loader) move the loader's count and not the model's; a hand-over moves them
// across once; freed, they leave the count they are in. 6000 bytes made by the model's thread stay the
// model's, and a hand-over of them moves nothing.
TEST(CountingAllocator, TheLoadersTensorsAreCountedApartUntilHandedOver) {
  memory::CountingAllocator& counter = memory::install_counting_allocator();
  counter.reset_peak();
  const int64_t model_before = counter.current_bytes(), loader_before = counter.loader_current_bytes();
  torch::Tensor batch;
  std::thread loader([&] {
    const memory::ScopedMemoryOwner loaders(memory::MemoryOwner::loader);
    batch = torch::empty({1000}, torch::kFloat);
  });
  loader.join();
  EXPECT_EQ(counter.loader_current_bytes() - loader_before, 4000);
  EXPECT_EQ(counter.current_bytes() - model_before, 0);
  EXPECT_EQ(counter.loader_peak_bytes() - loader_before, 4000);
  const auto own = torch::empty({1500}, torch::kFloat);  // this thread: the model's
  EXPECT_EQ(counter.current_bytes() - model_before, 6000);
  EXPECT_EQ(counter.hand_over_to_model(own.storage().data_ptr()), 0);
  EXPECT_EQ(counter.hand_over_to_model(batch.storage().data_ptr()), 4000);
  EXPECT_EQ(counter.hand_over_to_model(batch.storage().data_ptr()), 0);  // once
  EXPECT_EQ(counter.loader_current_bytes() - loader_before, 0);
  EXPECT_EQ(counter.current_bytes() - model_before, 10000);
  EXPECT_EQ(counter.peak_bytes() - model_before, 10000);
  batch = torch::Tensor();
  EXPECT_EQ(counter.current_bytes() - model_before, 6000);
  // A loader tensor freed where it was made leaves the loader's count.
  std::thread again([&] {
    const memory::ScopedMemoryOwner loaders(memory::MemoryOwner::loader);
    const auto t = torch::empty({250}, torch::kDouble);  // 2000 bytes
    EXPECT_EQ(counter.loader_current_bytes() - loader_before, 2000);
  });
  again.join();
  EXPECT_EQ(counter.loader_current_bytes() - loader_before, 0);
  EXPECT_EQ(counter.loader_peak_bytes() - loader_before, 4000);
  EXPECT_EQ(memory::thread_memory_owner(), memory::MemoryOwner::model);
}

// A two-layer perceptron, 8 -> 16 -> 4, trained on a synthetic batch with cross-entropy.
struct TinyMlpImpl : torch::nn::Module {
  TinyMlpImpl() {
    fc1 = register_module("fc1", torch::nn::Linear(8, 16));
    fc2 = register_module("fc2", torch::nn::Linear(16, 4));
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(TinyMlp);

class MlpWorkload final : public detail::LossWorkload {
 public:
  explicit MlpWorkload(const WorkloadOptions& o) : LossWorkload(o, "samples/s") {
    model_ = TinyMlp();
    seed_batch();
    x_ = torch::randn({o.batch, 8});
    y_ = torch::randint(0, 4, {o.batch}, torch::kLong);
    finish_setup(*model_, StepFlops{}, 212, 0, {&x_});
  }

 private:
  torch::Tensor forward() override { return model_->forward(x_); }
  torch::Tensor loss(const torch::Tensor& out) override { return torch::nn::functional::cross_entropy(out, y_); }
  TinyMlp model_{nullptr};
  torch::Tensor x_, y_;
};

Record measure_mlp(const std::string& optimizer, int64_t batch) {
  Case c;
  c.model = "mlp";
  c.batch = batch;
  c.optimizer = optimizer;
  MeasureSettings m;
  m.warmup_steps = 1;
  m.min_steps = 2;
  m.min_time_s = 0.0;
  m.max_time_s = 1.0;
  WorkloadOptions o;
  o.model = "mlp";
  o.batch = batch;
  o.optimizer = optimizer;
  return measure_workload(c, m, [&] { return std::make_unique<MlpWorkload>(o); });
}

// By hand from the shapes: fc1 has 8 x 16 weights + 16 biases, fc2 16 x 4 + 4: 212 fp32 numbers,
// 848 bytes. Backward leaves one gradient of each (848 bytes) and the 0-d fp32 loss (4 bytes) live.
// Adam keeps two moments per parameter (exp_avg, exp_avg_sq: 2 x 848); SGD with momentum one buffer
// (848); plain SGD nothing. The batch: b x 8 fp32 inputs and b int64 labels.
constexpr int64_t kMlpParamBytes = (8 * 16 + 16 + 16 * 4 + 4) * 4;

// What the forward leaves for the backward, by hand from the graph of fc2(relu(fc1(x))) and
// cross-entropy (log-softmax, then NLL): relu saves its output (b x 16 fp32), which fc2's weight
// gradient needs too; log-softmax saves its output (b x 4 fp32), which NLL needs too; NLL saves its 0-d
// total weight (4 bytes), and the loss itself is 0-d (4 bytes). fc1's output dies once relu has read it;
// fc2's output once log-softmax has; x and the labels, and the weights (fc2's transposed weight is a
// view), were live before. The counting allocator sees exactly these: 80 b + 8 bytes.
int64_t mlp_forward_live_bytes(int64_t batch) { return batch * 16 * 4 + batch * 4 * 4 + 4 + 4; }

TEST(MemoryBreakdown, TinyMlpMatchesBytesFromItsShapes) {
  const int64_t batch = 3;
  const Record adam = measure_mlp("adam", batch);
  ASSERT_EQ(adam.status, Status::ok) << adam.error;
  ASSERT_TRUE(adam.memory.has_value());
  const MemoryInfo& m = *adam.memory;
  EXPECT_EQ(m.source, "counting allocator");
  EXPECT_EQ(m.parameters_bytes, kMlpParamBytes);
  const int64_t inputs = batch * 8 * 4 + batch * 8;
  EXPECT_EQ(m.inputs_bytes, inputs);
  EXPECT_EQ(m.forward_live_bytes, mlp_forward_live_bytes(batch));
  EXPECT_EQ(m.gradients_bytes, kMlpParamBytes + 4);
  EXPECT_EQ(m.optimizer_bytes, 2 * kMlpParamBytes);
  // What stays from step to step: the parameters, their gradients and the loss, Adam's two moments.
  EXPECT_EQ(m.fixed_bytes, kMlpParamBytes + (kMlpParamBytes + 4) + 2 * kMlpParamBytes);
  // The peak is at least what was live at each phase: the model and batch with the forward's saved
  // tensors, and after the optimizer step the model, batch, gradients and moments; more than the latter,
  // since Adam's update makes temporaries (its denominator) while all of those are live.
  EXPECT_GE(m.peak_bytes, kMlpParamBytes + inputs + mlp_forward_live_bytes(batch));
  EXPECT_GT(m.peak_bytes, kMlpParamBytes + inputs + (kMlpParamBytes + 4) + 2 * kMlpParamBytes);
  EXPECT_GT(m.max_rss_bytes, m.peak_bytes);

  const Record momentum = measure_mlp("momentum", batch);
  ASSERT_TRUE(momentum.memory.has_value());
  EXPECT_EQ(momentum.memory->optimizer_bytes, kMlpParamBytes);
  // Plain SGD, batch 5: the forward's saved tensors grow by 80 bytes a sample; no optimizer state.
  const Record sgd = measure_mlp("sgd", 5);
  ASSERT_TRUE(sgd.memory.has_value());
  EXPECT_EQ(sgd.memory->forward_live_bytes, mlp_forward_live_bytes(5));
  EXPECT_EQ(sgd.memory->optimizer_bytes, 0);
  EXPECT_EQ(sgd.memory->gradients_bytes, kMlpParamBytes + 4);
  EXPECT_EQ(sgd.memory->fixed_bytes, kMlpParamBytes + (kMlpParamBytes + 4));
}

TEST(MemoryBreakdown, SurvivesTheRecordsJson) {
  const Record r = measure_mlp("adam", 2);
  ASSERT_TRUE(r.memory.has_value());
  const Record back = record_from_json(to_json(r));
  ASSERT_TRUE(back.memory.has_value());
  EXPECT_EQ(to_json(back), to_json(r));
  // A file written before the field reads as "not measured".
  nlohmann::json old = to_json(r);
  old.erase("memory");
  EXPECT_FALSE(record_from_json(old).memory.has_value());
  old["memory"] = to_json(r)["memory"];
  old["memory"]["peak_bytes"] = -5;
  EXPECT_THROW(record_from_json(old), std::runtime_error);
}

TEST(MemoryFit, RecoversALineAndPredictsTheLargestBatch) {
  // peak(b) = 1000 + 300 b, measured at 2, 4 and 8.
  const MemoryFit f = memory::fit_memory({8, 2, 4}, {3400, 1600, 2200}, "tensors");
  EXPECT_EQ(f.batches, (std::vector<int64_t>{2, 4, 8}));
  EXPECT_DOUBLE_EQ(f.per_sample_bytes, 300.0);
  EXPECT_DOUBLE_EQ(f.fixed_bytes, 1000.0);
  EXPECT_DOUBLE_EQ(f.linearity_error, 0.0);
  EXPECT_TRUE(f.linear);
  // 10000 bytes: (10000 - 1000) / 300 = 30 exactly; one byte less: 29.
  EXPECT_EQ(memory::predict(f, 10000).largest_batch, 30);
  EXPECT_EQ(memory::predict(f, 9999).largest_batch, 29);
  EXPECT_EQ(memory::predict(f, 1200).largest_batch, 0);  // not even one sample (1300 bytes)
  const MemoryPrediction p = memory::predict(f, 10000, 20);
  ASSERT_TRUE(p.requested_fits.has_value());
  EXPECT_TRUE(*p.requested_fits);
  EXPECT_EQ(p.margin_bytes, 10000 - 7000);
  EXPECT_FALSE(*memory::predict(f, 10000, 31).requested_fits);
  EXPECT_EQ(memory::predict(f, 10000, 31).margin_bytes, -300);
}

TEST(MemoryFit, SaysWhenTheThirdPointIsOffTheLine) {
  // A workspace that steps up by 1000 bytes between batch 2 and 4: the line through 4 and 8
  // (2000 + 300 b) gives 2600 at batch 2, measured 1600: 1000 / 1600 off.
  const MemoryFit f = memory::fit_memory({2, 4, 8}, {1600, 3200, 4400}, "tensors");
  EXPECT_DOUBLE_EQ(f.per_sample_bytes, 300.0);
  EXPECT_DOUBLE_EQ(f.fixed_bytes, 2000.0);
  EXPECT_NEAR(f.linearity_error, 1000.0 / 1600.0, 1e-12);
  EXPECT_FALSE(f.linear);
  // Two points check nothing.
  const MemoryFit two = memory::fit_memory({2, 4}, {1600, 2200}, "tensors");
  EXPECT_TRUE(std::isnan(two.linearity_error));
  EXPECT_TRUE(two.linear);
  EXPECT_THROW(memory::fit_memory({4, 4}, {1, 2}, "tensors"), std::invalid_argument);
  EXPECT_THROW(memory::fit_memory({4}, {1}, "tensors"), std::invalid_argument);
}

// A footprint that bends, measured at 2, 10 and 20 (3000, 12000, 20000 bytes): the line through the two
// largest rises 800 a sample from 4000. A size within the measured peaks is read off the segment around
// it: 8000 lies between 3000 (batch 2) and 12000 (batch 10), a segment rising 9000 / 8 = 1125 a sample,
// so 2 + floor(5000 / 1125) = 6 (the line would say (8000 - 4000) / 800 = 5); 15000, on the last
// segment, is the line's 10 + floor(3000 / 800) = 13; 25000, above every peak, the line's 26. The
// margin of batch 6 at 8000 is 8000 - (3000 + 4 x 1125) = 500.
TEST(MemoryFit, WithinTheMeasuredBatchesASizeIsReadOffTheSegmentAroundIt) {
  const MemoryFit f = memory::fit_memory({2, 10, 20}, {3000, 12000, 20000}, "address space", 1.0);
  EXPECT_EQ(memory::predict(f, 8000).largest_batch, 6);
  EXPECT_EQ(memory::predict(f, 15000).largest_batch, 13);
  EXPECT_EQ(memory::predict(f, 25000).largest_batch, 26);
  EXPECT_EQ(memory::predict(f, 8000, 6).margin_bytes, 500);
  EXPECT_DOUBLE_EQ(memory::fitted_peak(f, 6), 7500.0);
  EXPECT_DOUBLE_EQ(memory::fitted_peak(f, 30), 4000.0 + 800.0 * 30);
}

// Two batches measured close together (a refinement for each of two sizes, as a biLSTM's 546 and 552)
// differ by less than the heap's steps: the line must not stand on them. Footprint 1000 + 100 b at 4, 8
// and 16 (1400, 1800, 2600), and batch 17 a step of 1000 above that line (3600). The line's lower batch
// is the largest at most 3/4 of 17 (12.75): batch 8, so it rises (3600 - 1800) / 9 = 200 a sample from
// 1800 - 8 x 200 = 200, and 5600 bytes is batch (5600 - 200) / 200 = 27. Through 16 and 17 it would
// rise 1000 a sample and say 19. Batch 16 then lies 2600 - (200 + 3200) = -800 off that line: 800 / 2600.
// The footprint's rate per tensor byte (tensors 500 + 50 b) pairs each batch with its line's lower
// batch in the same way: 4 to 8 and 8 to 16 rise 2x, 8 to 17 rises 1800 / 450 = 4x (16 to 17 would be 20x).
TEST(MemoryFit, TheLineDoesNotStandOnTwoBatchesMeasuredCloseTogether) {
  const MemoryFit f = memory::fit_memory({4, 8, 16, 17}, {1400, 1800, 2600, 3600}, "address space", 1.0);
  EXPECT_EQ(memory::line_low_index(f.batches), 1u);
  EXPECT_DOUBLE_EQ(f.per_sample_bytes, 200.0);
  EXPECT_DOUBLE_EQ(f.fixed_bytes, 200.0);
  EXPECT_EQ(memory::predict(f, 5600).largest_batch, 27);
  EXPECT_NEAR(f.linearity_error, 800.0 / 2600.0, 1e-12);
  const MemoryFit tensors = memory::fit_memory({4, 8, 16, 17}, {700, 900, 1300, 1350}, "tensors");
  EXPECT_DOUBLE_EQ(memory::footprint_per_tensor_byte(f, tensors), 4.0);
  // The largest batch at most 3/4 of the last one.
  EXPECT_EQ(memory::line_low_index({4, 5}), 0u);
  EXPECT_EQ(memory::line_low_index({2, 7, 8}), 0u);
  EXPECT_EQ(memory::line_low_index({7, 8}), 0u);
  EXPECT_EQ(memory::line_low_index({2, 9, 10, 11}), 0u);
  EXPECT_EQ(memory::line_low_index({8, 9, 11}), 0u);   // 8 <= 8.25
  EXPECT_EQ(memory::line_low_index({9, 10, 11}), 1u);  // none <= 8.25: the one before the last
}

// A CUDA card from a CPU run's tensor line (1000 + 100 b, through batches 10 and 20), with 500 bytes of
// the card outside its allocator. A card of 13500 leaves 13000 to the allocator: the tensors alone
// fill it at (13000 - 1000) / 100 = 120 (the upper end); reserving 1.18x them, at
// (13000 / 1.18 - 1000) / 100 = 100.17, so 100; 1.26x, (13000 / 1.26 - 1000) / 100 = 93.17, so 93. A
// card of 1400 leaves 900, less than the fixed tensors: 0 everywhere. Flat tensors: no prediction.
TEST(MemoryFit, ACudaCardIsTheTensorsTimesTheAllocatorsRatioPlusTheContext) {
  const MemoryFit tensors = memory::fit_memory({10, 20}, {2000, 3000}, "tensors");
  const std::optional<GpuTarget> g = memory::predict_gpu_target(tensors, {13500, 1400}, 500);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->context_bytes, 500);
  ASSERT_EQ(g->predictions.size(), 2u);
  EXPECT_EQ(g->predictions[0].size_bytes, 13500);
  EXPECT_EQ(g->predictions[0].largest_batch_high, 120);
  EXPECT_EQ(g->predictions[0].largest_batch, 100);
  EXPECT_EQ(g->predictions[0].largest_batch_low, 93);
  EXPECT_EQ(g->predictions[1].largest_batch_high, 0);
  EXPECT_EQ(g->predictions[1].largest_batch, 0);
  EXPECT_NE(g->assumptions.find("500 B outside the caching allocator"), std::string::npos) << g->assumptions;
  EXPECT_FALSE(memory::predict_gpu_target(memory::fit_memory({2, 4}, {1000, 1000}, "tensors"), {13500}, 500));

  // In a results file: the same back, field by field against the values above (not the writer against
  // itself), and a value no prediction gives is refused, naming the field.
  MemoryInfo m;
  m.gpu_target = g;
  const MemoryInfo back = memory_from_json(memory_to_json(m));
  ASSERT_TRUE(back.gpu_target.has_value());
  EXPECT_EQ(back.gpu_target->context_bytes, 500);
  EXPECT_DOUBLE_EQ(back.gpu_target->reserved_per_tensor_byte, 1.18);
  EXPECT_DOUBLE_EQ(back.gpu_target->reserved_per_tensor_byte_max, 1.26);
  ASSERT_EQ(back.gpu_target->predictions.size(), 2u);
  EXPECT_EQ(back.gpu_target->predictions[0].size_bytes, 13500);
  EXPECT_EQ(back.gpu_target->predictions[0].largest_batch_high, 120);
  EXPECT_EQ(back.gpu_target->predictions[0].largest_batch, 100);
  EXPECT_EQ(back.gpu_target->predictions[0].largest_batch_low, 93);
  EXPECT_EQ(back.gpu_target->predictions[1].size_bytes, 1400);
  EXPECT_EQ(back.gpu_target->predictions[1].largest_batch, 0);
  EXPECT_EQ(back.gpu_target->assumptions, g->assumptions);
  nlohmann::json bad = memory_to_json(m);
  bad["gpu_target"]["predictions"][0]["largest_batch"] = 121;
  EXPECT_THROW(memory_from_json(bad), std::runtime_error);
  bad = memory_to_json(m);
  bad["gpu_target"]["reserved_per_tensor_byte"] = 0.5;
  EXPECT_THROW(memory_from_json(bad), std::runtime_error);
  bad = memory_to_json(m);
  bad["gpu_target"]["context_bytes"] = -1;
  EXPECT_THROW(memory_from_json(bad), std::runtime_error);
  bad = memory_to_json(m);
  bad.erase("gpu_target");
  EXPECT_FALSE(memory_from_json(bad).gpu_target.has_value());
}

TEST(MemoryFit, AFlatLineIsCappedNotInfinite) {
  const MemoryFit f = memory::fit_memory({2, 4}, {1000, 1000}, "tensors");
  EXPECT_EQ(memory::predict(f, 2000).largest_batch, memory::kMaxPredictedBatch);
  EXPECT_EQ(memory::predict(f, 500).largest_batch, 0);
}

TEST(MemorySize, ParsedAsPeopleWriteThem) {
  int64_t b = 0;
  EXPECT_EQ(size_text_problem("8G", &b), "");
  EXPECT_EQ(b, int64_t{8} << 30);
  EXPECT_EQ(size_text_problem("16 GiB", &b), "");
  EXPECT_EQ(b, int64_t{16} << 30);
  EXPECT_EQ(size_text_problem("512M", &b), "");
  EXPECT_EQ(b, int64_t{512} << 20);
  EXPECT_EQ(size_text_problem("1.5GB", &b), "");
  EXPECT_EQ(b, int64_t{3} << 29);
  EXPECT_EQ(size_text_problem("1000", &b), "");
  EXPECT_EQ(b, 1000);
  for (const char* bad : {"", "G", "8X", "-8G", "8 ", "8  G", "nan", "inf", "1e9", "0G", "8G8", " 8G"}) {
    EXPECT_NE(size_text_problem(bad), "") << bad;
  }
  EXPECT_NE(size_text_problem("99999999T"), "");
  EXPECT_THROW(parse_size("8 gigs", "--fits"), InputError);
  EXPECT_EQ(parse_size("16 GiB", "--fits"), int64_t{16} << 30);
}

TEST(MemorySize, PrintedAsPeopleWriteThem) {
  EXPECT_EQ(format_size(int64_t{8} << 30), "8 GiB");
  EXPECT_EQ(format_size(int64_t{80} << 30), "80 GiB");
  EXPECT_EQ(format_size(int64_t{512} << 20), "512 MiB");
  EXPECT_EQ(format_size(int64_t{3} << 29), "1.50 GiB");  // not a whole number of GiB
  EXPECT_EQ(format_size(1000), "1000 B");
  // Round trip: what is printed parses back to the same size.
  for (int64_t s : {int64_t{8} << 30, int64_t{24} << 30, int64_t{700} << 20}) {
    EXPECT_EQ(parse_size(format_size(s), "size"), s);
  }
}

// `memory ARGS` on a tiny model: one step per batch, no noise target, into a fresh folder's m.json.
struct MemoryRun {
  std::filesystem::path dir;
  std::string out;  // the results file
  test::CmdResult cmd;
  std::string printed;  // its stdout and stderr
};
MemoryRun run_memory(const std::string& tag, const std::string& args) {
  MemoryRun m;
  m.dir = test::temp_dir("memory", tag);
  m.out = (m.dir / "m.json").string();
  m.cmd = test::run_trainbench(
      "memory " + args + " --warmup 1 --min-steps 1 --max-steps 1 --min-time 0 --max-noise 100 -o " + m.out, m.dir);
  m.printed = m.cmd.out + m.cmd.err;
  return m;
}

TEST(MemoryCli, ABadSizeIsOneLineAndExitTwo) {
  const test::CmdResult r =
      test::run_trainbench("memory --model resnet18 --fits 8G,8X", test::temp_dir("memory", "bad_size"));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "trainbench: error: bad --fits size: '8X' is not a size like 8G, 16 GiB or 512M\n");
}

// A tiny convnet under a limit that batch 8 does not fit in: `memory` measures smaller batches
// instead of giving up. Its footprint (address space grown) moves by tens of MiB from run to run with
// the heap's growth steps (batch 2: 74-147 MiB, batch 4: 234-295 MiB, batch 8: 408-567 MiB seen), so
// the limit is set by what cannot move: batch 8's tensors alone take about 348 MiB (8 x 43.4 MiB of
// activations, 32 channels of 224x224 floats several times over), more than 300M, while batches 1 and
// 2 stay more than 150 MiB below it.
TEST(MemoryCli, UnderASmallLimitTheMeasuredBatchesAdapt) {
  const MemoryRun m = run_memory("adapt",
                                 "--model convnet --set channels=32 --set depth=2 --set image=224 --memory-limit 300M "
                                 "--measure-batches 1,2,8 --fits 300M");
  const std::string& printed = m.printed;
  ASSERT_EQ(m.cmd.code, 0) << printed;
  const ResultsFile f = read_results(m.out);
  std::vector<int64_t> oom, fitted;
  for (const auto& r : f.benchmarks) {
    ASSERT_NE(r.status, Status::error) << r.name << ": " << r.error;
    if (r.status == Status::oom) oom.push_back(r.batch_size);
    if (r.memory && r.memory->fit) fitted = r.memory->fit->batches;
  }
  ASSERT_FALSE(oom.empty()) << "batch 8 should not fit in 300M:\n" << printed;
  EXPECT_EQ(oom.front(), 8);
  ASSERT_GE(fitted.size(), 2u) << printed;
  for (int64_t b : fitted)
    EXPECT_LT(b, *std::min_element(oom.begin(), oom.end())) << "a fitted batch above one that ran out";
  EXPECT_NE(printed.find("ran out of memory: fitted on the"), std::string::npos) << printed;
  // The prediction for the limit itself stays below the batch that ran out under it; one is made.
  int predictions = 0;
  for (const auto& r : f.benchmarks) {
    if (!r.memory || r.memory->predictions.empty()) continue;
    ++predictions;
    EXPECT_LT(r.memory->predictions.front().largest_batch, *std::min_element(oom.begin(), oom.end()));
  }
  EXPECT_EQ(predictions, 1) << printed;
  std::filesystem::remove_all(m.dir);
}

// Without --memory-limit, a size the machine holds is refined for as under a limit: a batch near it
// is measured (the machine has the memory; no limit is needed to measure there) and named in the
// assumptions. 1200M is far past batches 1 and 2: their line (about 80 MiB a sample) puts it near
// batch 15, more than 4 times the largest measured. Then the size is tried under itself as a memory
// limit: its answer is a batch whose record trained under 1200M, and a batch at most 10% (or 1) above
// it ran out of memory under 1200M, both read from the records themselves.
TEST(MemoryCli, WithoutALimitASizeTheMachineHoldsIsRefinedFor) {
  const MemoryRun m = run_memory(
      "refine", "--model convnet --set channels=32 --set depth=2 --set image=224 --measure-batches 1,2 --fits 1200M");
  const std::string& printed = m.printed;
  ASSERT_EQ(m.cmd.code, 0) << printed;
  const ResultsFile f = read_results(m.out);
  bool found = false;
  for (const auto& r : f.benchmarks) {
    if (!r.memory || !r.memory->fit) continue;
    found = true;
    ASSERT_GE(r.memory->fit->batches.size(), 3u) << printed;
    EXPECT_GT(r.memory->fit->batches.back(), 2 * 4) << "the added batch lies beyond 4x the measured ones";
    EXPECT_NE(r.memory->assumptions.find("added so that the largest batch for"), std::string::npos)
        << r.memory->assumptions;
    ASSERT_EQ(r.memory->predictions.size(), 1u);
    const MemoryPrediction& p = r.memory->predictions[0];
    const int64_t size = int64_t{1200} << 20;
    bool trained = false, ran_out = false;
    for (const auto& t : f.benchmarks) {
      if (t.memory_limit_bytes == 0) continue;
      EXPECT_EQ(t.memory_limit_bytes, size) << t.name;
      trained = trained || (t.batch_size == p.trained_under_limit && t.status == Status::ok);
      ran_out = ran_out || (t.batch_size == p.out_of_memory_under_limit && t.status == Status::oom);
      if (t.status == Status::ok) {
        EXPECT_LE(t.batch_size, p.trained_under_limit) << "a larger batch trained";
      }
      if (t.status == Status::oom) {
        EXPECT_GE(t.batch_size, p.out_of_memory_under_limit) << "a smaller batch ran out";
      }
    }
    EXPECT_TRUE(trained) << printed;
    EXPECT_TRUE(ran_out) << printed;
    EXPECT_EQ(p.largest_batch, p.trained_under_limit);
    EXPECT_LE(static_cast<double>(p.out_of_memory_under_limit - 1 - p.trained_under_limit),
              std::max(1.0, 0.10 * static_cast<double>(p.out_of_memory_under_limit - 1)));
  }
  EXPECT_TRUE(found) << printed;
  std::filesystem::remove_all(m.dir);
}

// --line-only tries nothing under a size (every record ran without a limit, and the prediction is the
// line's); --within takes a percentage, and with --line-only it would mean nothing: both refused.
TEST(MemoryCli, LineOnlyTriesNothingUnderASize) {
  const MemoryRun m = run_memory(
      "line_only",
      "--model convnet --set channels=8 --set depth=1 --set image=32 --measure-batches 1,2 --fits 300M --line-only");
  ASSERT_EQ(m.cmd.code, 0) << m.printed;
  bool found = false;
  for (const auto& r : read_results(m.out).benchmarks) {
    EXPECT_EQ(r.memory_limit_bytes, 0) << r.name;
    if (!r.memory || !r.memory->fit) continue;
    found = true;
    EXPECT_EQ(r.memory->predictions.at(0).trained_under_limit, 0);
    EXPECT_EQ(r.memory->predictions.at(0).line_batch, 0);
  }
  EXPECT_TRUE(found) << m.printed;
  const test::CmdResult pct = test::run_trainbench("memory --model convnet --within 150", m.dir);
  EXPECT_EQ(pct.code, 2);
  EXPECT_NE(pct.err.find("--within"), std::string::npos) << pct.err;
  const test::CmdResult both = test::run_trainbench("memory --model convnet --within 5 --line-only", m.dir);
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
  std::filesystem::remove_all(m.dir);
}

// A CPU case's sizes as CUDA cards, as a user asks for them: the record carries the card's prediction
// from the tensor line (not the CPU footprint), with the context given.
// The upper end is where the tensors alone fill the card less the context: from the record's own
// tensor line, floor((80 GiB - 100 MiB - fixed) / per sample).
TEST(MemoryCli, ACpuCaseAlsoPredictsEachSizeAsACudaCard) {
  const MemoryRun m = run_memory("gpu_target",
                                 "--model convnet --set channels=8 --set depth=1 --set image=32 --measure-batches 1,2 "
                                 "--fits 80G --gpu-context 100M");
  const std::string& printed = m.printed;
  ASSERT_EQ(m.cmd.code, 0) << printed;
  EXPECT_NE(printed.find("as a CUDA card"), std::string::npos) << printed;
  bool found = false;
  for (const auto& r : read_results(m.out).benchmarks) {
    if (!r.memory || !r.memory->fit) continue;
    found = true;
    ASSERT_TRUE(r.memory->gpu_target.has_value()) << printed;
    const GpuTarget& g = *r.memory->gpu_target;
    EXPECT_EQ(g.context_bytes, int64_t{100} << 20);
    ASSERT_EQ(g.predictions.size(), 1u);
    const GpuTargetPrediction& p = g.predictions[0];
    EXPECT_EQ(p.size_bytes, int64_t{80} << 30);
    const double room = static_cast<double>((int64_t{80} << 30) - (int64_t{100} << 20) - r.memory->fixed_bytes);
    EXPECT_EQ(p.largest_batch_high, static_cast<int64_t>(std::floor(room / r.memory->activations_bytes_per_sample)));
    EXPECT_LT(p.largest_batch_low, p.largest_batch);
    EXPECT_LT(p.largest_batch, p.largest_batch_high);
  }
  EXPECT_TRUE(found) << printed;
  const test::CmdResult bad = test::run_trainbench("memory --model convnet --gpu-context 8X", m.dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "trainbench: error: bad --gpu-context: '8X' is not a size like 8G, 16 GiB or 512M\n");
  std::filesystem::remove_all(m.dir);
}

}  // namespace
}  // namespace trainbench
