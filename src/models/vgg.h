// VGG without batch norm (torchvision's vgg11 / vgg16 / vgg19).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace trainbench::models {

struct VGGImpl : torch::nn::Module {
  // `convs_per_stage`: 3x3 convs in each of the five stages (64, 128, 256, 512, 512 channels),
  // e.g. {1, 1, 2, 2, 2} for vgg11, {2, 2, 3, 3, 3} for vgg16, {2, 2, 4, 4, 4} for vgg19.
  explicit VGGImpl(const std::vector<int64_t>& convs_per_stage, int64_t num_classes = 1000);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::Sequential classifier{nullptr};
};
TORCH_MODULE(VGG);

}  // namespace trainbench::models
