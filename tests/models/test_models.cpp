#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/flops.h"
#include "models/models.h"

namespace trainbench::models {
namespace {

// Pinned per model: exact parameter count, and forward FLOPs of one sample at the model's input
// size (conv + linear only, 2 per multiply-add). Both reference columns were computed with
// torchvision 0.14 in Python: parameters as sum(p.numel()); FLOPs with forward hooks on every
// Conv2d (2 * out.numel() * in/groups * kh * kw) and Linear (2 * out.numel() * in_features).
// torchvision has no inception4, resnet50_v2 or mobilenet_v1; their references come from small
// independent PyTorch definitions written from the papers (see each model's header):
//   inception4   42,679,816 = the count of the widely used PyTorch Inception-v4 port
//                (Szegedy et al. 2016 with BN after every conv), stem 299 -> 35 -> 17 -> 8;
//   resnet50_v2  25,549,480 = resnet50's 25,557,032 - its 53,120 BN parameters + the v2 BNs
//                (stem 128, per block 2*(in + planes + planes) = 41,344 in all, final 2*2048);
//                its FLOPs are derived layer by layer below (resnet_v2_forward_flops);
//   mobilenet_v1 4,231,976 = 3x3 stem 864 + BN 64, 13 x (9*in + 2*in + in*out + 2*out), FC 1,025,000.
// tf_cnn_benchmarks' resnet50_v2 (bottleneck_block_v2) at 224, layer by layer, in multiply-adds:
// stem 7x7/2 conv 3 -> 64 at 112^2, 3x3/2 max pool to 56^2; then per block, with the stage's stride s
// on the first block of stages 2-4 and output size S = input size / s: 1x1 in -> p (stride s) at S^2,
// 3x3 p -> p (stride 1) at S^2, 1x1 p -> 4p at S^2, and a 1x1 projection in -> 4p (stride s) at S^2
// where the width changes; FC 2048 -> 1000. 2 FLOPs per multiply-add.
double resnet_v2_forward_flops(const std::vector<int64_t>& blocks) {
  double macs = 7.0 * 7 * 3 * 64 * 112 * 112;
  int64_t in = 64, size = 56;
  const int64_t planes[] = {64, 128, 256, 512};
  for (size_t stage = 0; stage < 4; ++stage) {
    for (int64_t b = 0; b < blocks[stage]; ++b) {
      const int64_t stride = (b == 0 && stage > 0) ? 2 : 1;
      size /= stride;
      const double p = static_cast<double>(planes[stage]), out = 4.0 * p, area = static_cast<double>(size * size);
      macs += static_cast<double>(in) * p * area;                                        // 1x1, stride s
      macs += 9.0 * p * p * area;                                                        // 3x3, stride 1
      macs += p * out * area;                                                            // 1x1 expand
      if (static_cast<double>(in) != out) macs += static_cast<double>(in) * out * area;  // projection
      in = static_cast<int64_t>(out);
    }
  }
  macs += 2048.0 * 1000;
  return 2.0 * macs;
}

struct Reference {
  const char* name;
  int64_t parameters;
  double forward_flops;  // batch 1
};

const Reference kReferences[] = {
    {"alexnet", 61'100'840, 1'428'376'960.0},
    {"vgg11", 132'863'336, 15'218'180'096.0},
    {"vgg16", 138'357'544, 30'940'528'640.0},
    {"vgg19", 143'667'240, 39'264'124'928.0},
    {"googlenet", 6'624'904, 2'996'752'384.0},
    {"inception3", 23'834'568, 11'426'432'192.0},
    {"inception4", 42'679'816, 24'507'949'248.0},
    {"resnet18", 11'689'512, 3'628'146'688.0},
    {"resnet34", 21'797'672, 7'327'522'816.0},
    {"resnet50", 25'557'032, 8'178'368'512.0},
    {"resnet101", 44'549'160, 15'602'810'880.0},
    {"resnet152", 60'192'808, 23'027'253'248.0},
    {"resnet50_v2", 25'549'480, resnet_v2_forward_flops({3, 4, 6, 3})},  // 7.72 G
    {"mobilenet_v1", 4'231'976, 1'137'480'704.0},
    {"mobilenet_v2", 3'504'872, 601'548'544.0},
    {"densenet121", 7'978'856, 5'668'323'328.0},
};

void PrintTo(const Reference& r, std::ostream* os) { *os << r.name; }

class Zoo : public ::testing::TestWithParam<Reference> {};

// Builds each model once: parameter count, output shape of a batch of 2, and that batch's FLOPs.
TEST_P(Zoo, ParameterCountShapeAndFlops) {
  const Reference& ref = GetParam();
  const ModelInfo* info = find_model(ref.name);
  ASSERT_NE(info, nullptr) << ref.name;
  auto model = info->make();
  ASSERT_TRUE(model.ptr()->is_training()) << "a fresh model trains";
  EXPECT_EQ(parameter_count(*model.ptr()), ref.parameters) << ref.name;

  std::vector<int64_t> shape{2};
  shape.insert(shape.end(), info->input_shape.begin(), info->input_shape.end());
  torch::NoGradGuard no_grad;
  model.ptr()->eval();
  torch::Tensor out;
  const double flops = count_flops([&] { out = model.forward(torch::randn(shape)); });
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{2, 1000})) << ref.name;
  EXPECT_TRUE(torch::isfinite(out).all().item<bool>()) << ref.name;
  EXPECT_DOUBLE_EQ(flops, 2.0 * ref.forward_flops) << ref.name;
}

INSTANTIATE_TEST_SUITE_P(Models, Zoo, ::testing::ValuesIn(kReferences),
                         [](const ::testing::TestParamInfo<Reference>& p) { return std::string(p.param.name); });

TEST(ModelsRegistry, ListsTheSixteenModelsInOrder) {
  std::vector<std::string> names;
  for (const auto& info : all_models()) names.push_back(info.name);
  const std::vector<std::string> expected = {
      "alexnet",  "vgg11",    "vgg16",     "vgg19",     "googlenet",   "inception3",   "inception4",   "resnet18",
      "resnet34", "resnet50", "resnet101", "resnet152", "resnet50_v2", "mobilenet_v1", "mobilenet_v2", "densenet121"};
  EXPECT_EQ(names, expected);
}

TEST(ModelsRegistry, InfoFields) {
  for (const auto& info : all_models()) {
    EXPECT_EQ(info.family, "cnn") << info.name;
    EXPECT_EQ(info.num_classes, 1000) << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
    EXPECT_GT(info.default_batch, 0) << info.name;
    const int64_t size = (info.name == "inception3" || info.name == "inception4") ? 299 : 224;
    EXPECT_EQ(info.input_shape, (std::vector<int64_t>{3, size, size})) << info.name;
  }
  EXPECT_EQ(find_model("alexnet")->default_batch, 512);
  EXPECT_EQ(find_model("vgg16")->default_batch, 64);
  EXPECT_EQ(find_model("resnet50")->default_batch, 64);
  EXPECT_EQ(find_model("resnet152")->default_batch, 32);
}

TEST(ModelsRegistry, UnknownNameIsNull) {
  EXPECT_EQ(find_model("resnet51"), nullptr);
  EXPECT_EQ(find_model(""), nullptr);
  EXPECT_NE(find_model("densenet121"), nullptr);
}

// A training step on a small input: the initialisation gives a finite loss and finite gradients.
TEST(ModelsRegistry, OneTrainingStepIsFinite) {
  for (const char* name : {"resnet50_v2", "mobilenet_v1", "mobilenet_v2"}) {
    auto model = find_model(name)->make();
    torch::optim::SGD sgd(model.ptr()->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    const auto x = torch::randn({4, 3, 64, 64});
    const auto y = torch::randint(0, 1000, {4}, torch::kLong);
    for (int step = 0; step < 2; ++step) {
      sgd.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model.forward(x), y);
      loss.backward();
      sgd.step();
      EXPECT_TRUE(std::isfinite(loss.item<double>())) << name << " step " << step;
    }
  }
}

// ---- FLOP counting of single layers, by hand ----

TEST(FlopsOfLayers, Conv2d) {
  torch::NoGradGuard no_grad;
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 8, 3).padding(1));
  const double f = count_flops([&] { conv->forward(torch::randn({1, 3, 8, 8})); });
  EXPECT_DOUBLE_EQ(f, 2.0 * 8 * 8 * 8 * 3 * 3 * 3);  // 2 * C_out * H * W * C_in * kh * kw = 27,648
}

TEST(FlopsOfLayers, GroupedAndDepthwiseConv2d) {
  torch::NoGradGuard no_grad;
  // 4 groups: each output channel sees 8 / 4 = 2 input channels.
  torch::nn::Conv2d grouped(torch::nn::Conv2dOptions(8, 16, 3).padding(1).groups(4).bias(false));
  EXPECT_DOUBLE_EQ(count_flops([&] {
                     grouped->forward(torch::randn({2, 8, 8, 8}));
                   }),
                   2.0 * 2 * 16 * 8 * 8 * 2 * 3 * 3);  // batch 2 -> 73,728
  // Depthwise, stride 2: 8x8 -> 4x4, one input channel per output channel.
  torch::nn::Conv2d depthwise(torch::nn::Conv2dOptions(8, 8, 3).stride(2).padding(1).groups(8));
  EXPECT_DOUBLE_EQ(count_flops([&] {
                     depthwise->forward(torch::randn({1, 8, 8, 8}));
                   }),
                   2.0 * 8 * 4 * 4 * 1 * 3 * 3);  // 2,304
}

TEST(FlopsOfLayers, Linear) {
  torch::NoGradGuard no_grad;
  torch::nn::Linear with_bias(10, 5);
  EXPECT_DOUBLE_EQ(count_flops([&] { with_bias->forward(torch::randn({3, 10})); }), 2.0 * 3 * 5 * 10);
  torch::nn::Linear no_bias(torch::nn::LinearOptions(10, 5).bias(false));
  EXPECT_DOUBLE_EQ(count_flops([&] { no_bias->forward(torch::randn({3, 10})); }), 2.0 * 3 * 5 * 10);
}

// ResNet-50 at 224: 4.09 G multiply-adds (as fvcore / ptflops report) = 8.18 GFLOPs. By layer shapes:
// stem 7*7*3*64 * 112^2 = 118.0M MACs; stage 1 at 56^2: first block (64*64 + 9*64*64 + 2 * 64*256) * 56^2
// = 231.2M, two more (256*64 + 9*64*64 + 64*256) * 56^2 = 218.4M each -> 667.9M; likewise stages 2-4
// 1,027.6M, 1,464.3M, 809.2M; FC 2048*1000 = 2.0M; total 4.089 G MACs.
TEST(FlopsOfModels, ResNet50Forward) {
  auto model = find_model("resnet50")->make();
  const double f = forward_flops(model, {3, 224, 224}, 1);
  EXPECT_NEAR(f, 8.18e9, 0.02 * 8.18e9);
  EXPECT_TRUE(model.ptr()->is_training()) << "training mode is restored";
  EXPECT_DOUBLE_EQ(forward_flops(model, {3, 224, 224}, 64), 64.0 * f);
}

// v2 has the stride on the 1x1 conv: ~0.46 GFLOP less than v1.5's 8.18 (the first 1x1 of stages 2-4
// runs at the strided size: 3 x 256*128*(56^2 - 28^2) MACs).
TEST(FlopsOfModels, ResNet50V2IsCheaperThanV15ByTheStridedOneByOnes) {
  const double v2 = resnet_v2_forward_flops({3, 4, 6, 3});
  EXPECT_NEAR(v2, 7.72e9, 0.005e9);
  EXPECT_DOUBLE_EQ(8'178'368'512.0 - v2, 2.0 * 3 * 256 * 128 * (56 * 56 - 28 * 28));
}

// Training FLOPs of AlexNet (torchvision, 224) by hand, per layer: forward, backward-weights for every
// layer, backward-data for every layer but the first conv (its input is the image). Forward
// multiply-adds per image: conv1 11x11/4 3 -> 64 at 55^2: 70,276,800; conv2 5x5 64 -> 192 at 27^2:
// 223,948,800; conv3 3x3 192 -> 384 at 13^2: 112,140,288; conv4 384 -> 256: 149,520,384; conv5
// 256 -> 256: 99,680,256; FC 9216 -> 4096: 37,748,736; 4096 -> 4096: 16,777,216; 4096 -> 1000: 4,096,000.
TEST(FlopsOfModels, AlexNetTrainingByLayer) {
  const double conv1 = 70'276'800.0;
  const double macs =
      conv1 + 223'948'800.0 + 112'140'288.0 + 149'520'384.0 + 99'680'256.0 + 37'748'736.0 + 16'777'216.0 + 4'096'000.0;
  const int64_t batch = 2;
  auto model = find_model("alexnet")->make();
  const StepFlops f = model_flops(model, {3, 224, 224}, batch);
  EXPECT_DOUBLE_EQ(f.forward, batch * 2.0 * macs);
  EXPECT_DOUBLE_EQ(f.backward_weights, batch * 2.0 * macs);
  EXPECT_DOUBLE_EQ(f.backward_data, batch * 2.0 * (macs - conv1));
  EXPECT_DOUBLE_EQ(f.training(), batch * 2.0 * (3 * macs - conv1));  // 4.14 GFLOP per image, not 3 x 1.43
  EXPECT_TRUE(model.ptr()->is_training()) << "training mode is restored";
}

// A tiny convnet by hand: conv 3 -> 4 (3x3, same padding) at 6^2, ReLU, conv 4 -> 5 (1x1) at 6^2,
// linear 180 -> 7. Frozen weights get no backward-weights, an input that needs no gradient no
// backward-data.
TEST(FlopsOfLayers, TrainingStepOfATinyConvNet) {
  torch::nn::Conv2d a(torch::nn::Conv2dOptions(3, 4, 3).padding(1).bias(false));
  torch::nn::Conv2d b(torch::nn::Conv2dOptions(4, 5, 1));
  torch::nn::Linear fc(180, 7);
  const double fa = 2.0 * 36 * 4 * 3 * 9, fb = 2.0 * 36 * 5 * 4, ffc = 2.0 * 180 * 7;
  auto forward = [&] { fc(torch::relu(b(a(torch::randn({1, 3, 6, 6})))).flatten(1)); };
  StepFlops f = count_step_flops(forward);
  EXPECT_DOUBLE_EQ(f.forward, fa + fb + ffc);
  EXPECT_DOUBLE_EQ(f.backward_data, fb + ffc);
  EXPECT_DOUBLE_EQ(f.backward_weights, fa + fb + ffc);

  b->weight.set_requires_grad(false);  // frozen middle layer: still passes the gradient back to a
  f = count_step_flops(forward);
  EXPECT_DOUBLE_EQ(f.backward_data, fb + ffc);
  EXPECT_DOUBLE_EQ(f.backward_weights, fa + ffc);

  {
    torch::NoGradGuard no_grad;  // inference: no backward at all
    f = count_step_flops(forward);
  }
  EXPECT_DOUBLE_EQ(f.forward, fa + fb + ffc);
  EXPECT_DOUBLE_EQ(f.backward_data + f.backward_weights, 0.0);
}

}  // namespace
}  // namespace trainbench::models
