#include "models/registry.h"

#include <map>
#include <stdexcept>

#include "core/flops.h"
#include "models/models.h"

namespace trainbench::models {
namespace {

// Each model of the zoo's table (cases/zoo.h) by name: what builds it.
std::vector<ModelInfo> build_registry() {
  using RB = ResNetBlock;
  using Ints = std::vector<int64_t>;  // the holders' forwarding constructors take no braced lists
  using torch::nn::AnyModule;
  const std::map<std::string, std::function<AnyModule()>> factories = {
      {"alexnet", [] { return AnyModule(AlexNet()); }},
      {"vgg11",
       [] {
         return AnyModule(VGG(Ints{1, 1, 2, 2, 2}));
       }},
      {"vgg16",
       [] {
         return AnyModule(VGG(Ints{2, 2, 3, 3, 3}));
       }},
      {"vgg19",
       [] {
         return AnyModule(VGG(Ints{2, 2, 4, 4, 4}));
       }},
      {"googlenet", [] { return AnyModule(GoogLeNet()); }},
      {"inception3", [] { return AnyModule(Inception3()); }},
      {"inception4", [] { return AnyModule(Inception4()); }},
      {"resnet18",
       [] {
         return AnyModule(ResNet(RB::basic, Ints{2, 2, 2, 2}));
       }},
      {"resnet34",
       [] {
         return AnyModule(ResNet(RB::basic, Ints{3, 4, 6, 3}));
       }},
      {"resnet50",
       [] {
         return AnyModule(ResNet(RB::bottleneck, Ints{3, 4, 6, 3}));
       }},
      {"resnet101",
       [] {
         return AnyModule(ResNet(RB::bottleneck, Ints{3, 4, 23, 3}));
       }},
      {"resnet152",
       [] {
         return AnyModule(ResNet(RB::bottleneck, Ints{3, 8, 36, 3}));
       }},
      {"resnet50_v2",
       [] {
         return AnyModule(ResNet(RB::preact_bottleneck, Ints{3, 4, 6, 3}));
       }},
      {"mobilenet_v1", [] { return AnyModule(MobileNetV1()); }},
      {"mobilenet_v2", [] { return AnyModule(MobileNetV2()); }},
      {"densenet121",
       [] {
         return AnyModule(DenseNet(32, Ints{6, 12, 24, 16}, 64));
       }},
  };
  std::vector<ModelInfo> m;
  for (const ZooModel& z : zoo_models()) {
    const auto f = factories.find(z.name);
    if (f == factories.end())
      throw std::logic_error("zoo model '" + z.name + "' has no factory in models/registry.cpp");
    m.push_back({z, f->second});
  }
  if (m.size() != factories.size()) throw std::logic_error("models/registry.cpp builds a model the zoo does not list");
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
