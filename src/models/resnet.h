// ResNet v1.5 (torchvision's: the stride sits on the 3x3 conv) and the pre-activation ResNet v2
// (tf_cnn_benchmarks': the stride sits on the first 1x1 conv).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace trainbench::models {

enum class ResNetBlock {
  basic,              // two 3x3 convs (resnet18/34)
  bottleneck,         // 1x1 -> 3x3 -> 1x1, BN after each conv, ReLU after the sum (resnet50/101/152)
  preact_bottleneck,  // BN-ReLU before each conv, stride on the first 1x1, sum without activation ("v2")
};

struct ResNetImpl : torch::nn::Module {
  // `layers`: blocks per stage, e.g. {3, 4, 6, 3} for resnet50.
  ResNetImpl(ResNetBlock block, const std::vector<int64_t>& layers, int64_t num_classes = 1000);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  torch::nn::BatchNorm2d post_bn{nullptr};  // v2 only: the last block's sum is normalised before pooling
  torch::nn::Linear fc{nullptr};

 private:
  torch::nn::Sequential make_layer(int64_t planes, int64_t blocks, int64_t stride);

  ResNetBlock block_;
  int64_t inplanes_ = 64;
};
TORCH_MODULE(ResNet);

}  // namespace trainbench::models
