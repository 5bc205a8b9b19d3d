// AlexNet as torchvision defines it (the one-tower variant of Krizhevsky 2014, 64-192-384-256-256 filters).
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace trainbench::models {

struct AlexNetImpl : torch::nn::Module {
  explicit AlexNetImpl(int64_t num_classes = 1000);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::Sequential classifier{nullptr};
};
TORCH_MODULE(AlexNet);

}  // namespace trainbench::models
