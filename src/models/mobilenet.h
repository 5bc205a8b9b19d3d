// MobileNet v1 (Howard et al. 2017) and v2 (torchvision's MobileNetV2), width multiplier 1.0.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace trainbench::models {

// 3x3 conv (32, stride 2), then 13 depthwise-separable blocks (3x3 depthwise + 1x1 pointwise),
// BN + ReLU after every conv, global average pool, FC 1024 -> classes.
struct MobileNetV1Impl : torch::nn::Module {
  explicit MobileNetV1Impl(int64_t num_classes = 1000);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(MobileNetV1);

// Inverted residual blocks with linear bottlenecks, ReLU6, dropout 0.2 before the classifier.
struct MobileNetV2Impl : torch::nn::Module {
  explicit MobileNetV2Impl(int64_t num_classes = 1000);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::Dropout dropout{nullptr};
  torch::nn::Linear classifier{nullptr};
};
TORCH_MODULE(MobileNetV2);

}  // namespace trainbench::models
