#include "models/registry.h"

#include "core/flops.h"
#include "models/models.h"

namespace trainbench::models {
namespace {

template <typename Factory>
ModelInfo cnn(std::string name, int64_t image_size, int64_t default_batch, std::string description, Factory factory) {
  ModelInfo info;
  info.name = std::move(name);
  info.family = "cnn";
  info.input_shape = {3, image_size, image_size};
  info.default_batch = default_batch;
  info.num_classes = 1000;
  info.description = std::move(description);
  info.make = [factory] { return torch::nn::AnyModule(factory()); };
  return info;
}

// Image sizes and default per-device batches follow tf_cnn_benchmarks where it has the model
// (alexnet 512, vgg 64, resnet50 / resnet50_v2 64, resnet101 / 152 32, inception / googlenet /
// mobilenet 32); resnet18 / 34 and densenet121 take its fallback of 32.
std::vector<ModelInfo> build_registry() {
  using RB = ResNetBlock;
  using Ints = std::vector<int64_t>;  // the holders' forwarding constructors take no braced lists
  std::vector<ModelInfo> m;
  m.push_back(
      cnn("alexnet", 224, 512, "AlexNet, torchvision's one-tower variant (61.1M params)", [] { return AlexNet(); }));
  m.push_back(cnn("vgg11", 224, 64, "VGG-11 without batch norm (132.9M params)", [] {
    return VGG(Ints{1, 1, 2, 2, 2});
  }));
  m.push_back(cnn("vgg16", 224, 64, "VGG-16 without batch norm (138.4M params)", [] {
    return VGG(Ints{2, 2, 3, 3, 3});
  }));
  m.push_back(cnn("vgg19", 224, 64, "VGG-19 without batch norm (143.7M params)", [] {
    return VGG(Ints{2, 2, 4, 4, 4});
  }));
  m.push_back(cnn("googlenet", 224, 32, "GoogLeNet / Inception v1 with BN, no aux classifiers (6.6M params)",
                  [] { return GoogLeNet(); }));
  m.push_back(
      cnn("inception3", 299, 32, "Inception v3, no aux classifier (23.8M params)", [] { return Inception3(); }));
  m.push_back(
      cnn("inception4", 299, 32, "Inception v4, Szegedy et al. 2016 (42.7M params)", [] { return Inception4(); }));
  m.push_back(cnn("resnet18", 224, 32, "ResNet-18, basic blocks (11.7M params)", [] {
    return ResNet(RB::basic, Ints{2, 2, 2, 2});
  }));
  m.push_back(cnn("resnet34", 224, 32, "ResNet-34, basic blocks (21.8M params)", [] {
    return ResNet(RB::basic, Ints{3, 4, 6, 3});
  }));
  m.push_back(cnn("resnet50", 224, 64, "ResNet-50 v1.5, stride on the 3x3 conv (25.6M params)", [] {
    return ResNet(RB::bottleneck, Ints{3, 4, 6, 3});
  }));
  m.push_back(cnn("resnet101", 224, 32, "ResNet-101 v1.5 (44.5M params)", [] {
    return ResNet(RB::bottleneck, Ints{3, 4, 23, 3});
  }));
  m.push_back(cnn("resnet152", 224, 32, "ResNet-152 v1.5 (60.2M params)", [] {
    return ResNet(RB::bottleneck, Ints{3, 8, 36, 3});
  }));
  m.push_back(cnn("resnet50_v2", 224, 64,
                  "ResNet-50 v2 (tf_cnn_benchmarks), pre-activation, stride on the 1x1 (25.5M params)", [] {
                    return ResNet(RB::preact_bottleneck, Ints{3, 4, 6, 3});
                  }));
  m.push_back(cnn("mobilenet_v1", 224, 32, "MobileNet v1, width 1.0 (4.2M params)", [] { return MobileNetV1(); }));
  m.push_back(cnn("mobilenet_v2", 224, 32, "MobileNet v2, width 1.0 (3.5M params)", [] { return MobileNetV2(); }));
  m.push_back(cnn("densenet121", 224, 32, "DenseNet-121, growth 32 (8.0M params)", [] {
    return DenseNet(32, Ints{6, 12, 24, 16}, 64);
  }));
  return m;
}

}  // namespace

const std::vector<ModelInfo>& all_models() {
  static const std::vector<ModelInfo> registry = build_registry();
  return registry;
}

const ModelInfo* find_model(const std::string& name) {
  for (const auto& info : all_models()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

int64_t parameter_count(torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters(/*recurse=*/true)) n += p.numel();
  return n;
}

StepFlops model_flops(torch::nn::AnyModule& model, const std::vector<int64_t>& input_shape, int64_t batch) {
  auto module = model.ptr();
  const bool was_training = module->is_training();
  // The input goes where the model's weights are, in their dtype.
  auto options = torch::TensorOptions().dtype(torch::kFloat32);
  const auto params = module->parameters();
  if (!params.empty()) options = options.device(params.front().device()).dtype(params.front().dtype());
  std::vector<int64_t> shape{1};
  shape.insert(shape.end(), input_shape.begin(), input_shape.end());
  module->eval();
  StepFlops flops;
  try {
    torch::AutoGradMode grad(true);  // which operands require a gradient decides the backward part
    const auto input = torch::randn(shape, options);
    flops = count_step_flops([&] { model.forward(input); });
  } catch (...) {
    module->train(was_training);
    throw;
  }
  module->train(was_training);
  return flops.scaled(static_cast<double>(batch));
}

double forward_flops(torch::nn::AnyModule& model, const std::vector<int64_t>& input_shape, int64_t batch) {
  return model_flops(model, input_shape, batch).forward;
}

}  // namespace trainbench::models
