#include "cases/zoo.h"

namespace trainbench::models {
namespace {

ZooModel cnn(std::string name, int64_t image_size, int64_t default_batch, std::string description) {
  return {std::move(name), "cnn", {3, image_size, image_size}, default_batch, 1000, std::move(description)};
}

}  // namespace

// Image sizes and default per-device batches follow tf_cnn_benchmarks where it has the model
// (alexnet 512, vgg 64, resnet50 / resnet50_v2 64, resnet101 / 152 32, inception / googlenet /
// mobilenet 32); resnet18 / 34 and densenet121 take its fallback of 32.
const std::vector<ZooModel>& zoo_models() {
  static const std::vector<ZooModel> zoo = {
      cnn("alexnet", 224, 512, "AlexNet, torchvision's one-tower variant (61.1M params)"),
      cnn("vgg11", 224, 64, "VGG-11 without batch norm (132.9M params)"),
      cnn("vgg16", 224, 64, "VGG-16 without batch norm (138.4M params)"),
      cnn("vgg19", 224, 64, "VGG-19 without batch norm (143.7M params)"),
      cnn("googlenet", 224, 32, "GoogLeNet / Inception v1 with BN, no aux classifiers (6.6M params)"),
      cnn("inception3", 299, 32, "Inception v3, no aux classifier (23.8M params)"),
      cnn("inception4", 299, 32, "Inception v4, Szegedy et al. 2016 (42.7M params)"),
      cnn("resnet18", 224, 32, "ResNet-18, basic blocks (11.7M params)"),
      cnn("resnet34", 224, 32, "ResNet-34, basic blocks (21.8M params)"),
      cnn("resnet50", 224, 64, "ResNet-50 v1.5, stride on the 3x3 conv (25.6M params)"),
      cnn("resnet101", 224, 32, "ResNet-101 v1.5 (44.5M params)"),
      cnn("resnet152", 224, 32, "ResNet-152 v1.5 (60.2M params)"),
      cnn("resnet50_v2", 224, 64, "ResNet-50 v2 (tf_cnn_benchmarks), pre-activation, stride on the 1x1 (25.5M params)"),
      cnn("mobilenet_v1", 224, 32, "MobileNet v1, width 1.0 (4.2M params)"),
      cnn("mobilenet_v2", 224, 32, "MobileNet v2, width 1.0 (3.5M params)"),
      cnn("densenet121", 224, 32, "DenseNet-121, growth 32 (8.0M params)"),
  };
  return zoo;
}

}  // namespace trainbench::models
