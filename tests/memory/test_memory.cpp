// Activation memory of one ResNet-50 training step, counted by trainbench's CPU allocator (which wraps LibTorch's):
// our model must allocate what torchvision's layout does (in-place ReLU and `out += identity`). The
// reference is written out here from torchvision's resnet.py, in both layouts, so the test also shows
// that the measure tells them apart.
#include <gtest/gtest.h>

#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <functional>

#include "core/counting_allocator.h"
#include "models/registry.h"

namespace trainbench {
namespace {

using memory::CountingAllocator;

// torchvision's Bottleneck (v1.5) and ResNet-50 trunk, with its in-place ops or without them.
struct RefBottleneckImpl : torch::nn::Module {
  RefBottleneckImpl(int64_t in, int64_t planes, int64_t stride, bool inplace) : inplace(inplace) {
    auto conv = [](int64_t i, int64_t o, int64_t k, int64_t s) {
      return torch::nn::Conv2d(torch::nn::Conv2dOptions(i, o, k).stride(s).padding(k / 2).bias(false));
    };
    conv1 = register_module("conv1", conv(in, planes, 1, 1));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(planes));
    conv2 = register_module("conv2", conv(planes, planes, 3, stride));
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(planes));
    conv3 = register_module("conv3", conv(planes, planes * 4, 1, 1));
    bn3 = register_module("bn3", torch::nn::BatchNorm2d(planes * 4));
    if (stride != 1 || in != planes * 4) {
      down = register_module("down", conv(in, planes * 4, 1, stride));
      down_bn = register_module("down_bn", torch::nn::BatchNorm2d(planes * 4));
    }
  }
  torch::Tensor relu(torch::Tensor x) const { return inplace ? torch::relu_(x) : torch::relu(x); }
  torch::Tensor forward(torch::Tensor x) {
    auto out = relu(bn1(conv1(x)));
    out = relu(bn2(conv2(out)));
    out = bn3(conv3(out));
    auto identity = down ? down_bn(down(x)) : x;
    out = inplace ? out.add_(identity) : out + identity;
    return relu(out);
  }
  bool inplace;
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr}, down{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr}, down_bn{nullptr};
};
TORCH_MODULE(RefBottleneck);

struct RefResNet50Impl : torch::nn::Module {
  explicit RefResNet50Impl(bool inplace) : inplace(inplace) {
    stem =
        register_module("stem", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)));
    bn = register_module("bn", torch::nn::BatchNorm2d(64));
    blocks = register_module("blocks", torch::nn::Sequential());
    int64_t in = 64;
    const int64_t counts[] = {3, 4, 6, 3}, planes[] = {64, 128, 256, 512};
    for (int s = 0; s < 4; ++s) {
      for (int64_t b = 0; b < counts[s]; ++b) {
        blocks->push_back(RefBottleneck(in, planes[s], b == 0 && s > 0 ? 2 : 1, inplace));
        in = planes[s] * 4;
      }
    }
    fc = register_module("fc", torch::nn::Linear(2048, 1000));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = bn(stem(x));
    x = inplace ? torch::relu_(x) : torch::relu(x);
    x = blocks->forward(torch::max_pool2d(x, 3, 2, 1));
    return fc(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }
  bool inplace;
  torch::nn::Conv2d stem{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  torch::nn::Sequential blocks{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(RefResNet50);

struct StepMemory {
  int64_t forward_allocated = 0;  // bytes allocated by the forward pass and the loss
  int64_t saved = 0;              // bytes still held when backward starts (activations kept for it)
  int64_t step_peak = 0;          // peak of the step above what was live before it
};

StepMemory measure_step(CountingAllocator& counter, const std::function<torch::Tensor(const torch::Tensor&)>& forward) {
  torch::manual_seed(0);
  const auto x = torch::randn({2, 3, 64, 64});
  const auto y = torch::randint(0, 1000, {2}, torch::kLong);
  StepMemory m;
  const int64_t before = counter.current_bytes();
  const int64_t total_before = counter.allocated_bytes_total();
  counter.reset_peak();
  auto loss = torch::nn::functional::cross_entropy(forward(x), y);
  m.forward_allocated = counter.allocated_bytes_total() - total_before;
  m.saved = counter.current_bytes() - before;
  loss.backward();  // gradients accumulate into .grad: the first step allocates them, later ones add
  m.step_peak = counter.peak_bytes() - before;
  return m;
}

TEST(ActivationMemory, ResNet50StepMatchesTorchvisionInPlaceLayout) {
  CountingAllocator& counter = memory::install_counting_allocator();

  auto ours = models::find_model("resnet50")->make();
  RefResNet50 inplace(true), out_of_place(false);
  // The second step of each: the first may allocate once-only state (kernel caches).
  auto twice = [&](const std::function<torch::Tensor(const torch::Tensor&)>& forward) {
    measure_step(counter, forward);
    return measure_step(counter, forward);
  };
  const StepMemory m = twice([&](const torch::Tensor& x) { return ours.forward(x); });
  const StepMemory ref = twice([&](const torch::Tensor& x) { return inplace->forward(x); });
  const StepMemory no = twice([&](const torch::Tensor& x) { return out_of_place->forward(x); });

  // The measure tells the layouts apart: without in-place ops every ReLU and residual sum allocates
  // one more activation (2 x 64 x 32 x 32 floats after the stem alone).
  ASSERT_GT(no.forward_allocated, ref.forward_allocated + 2 * 64 * 32 * 32 * 4);
  EXPECT_EQ(m.forward_allocated, ref.forward_allocated);
  EXPECT_EQ(m.saved, ref.saved);
  EXPECT_LE(m.step_peak, ref.step_peak);
}

}  // namespace
}  // namespace trainbench
