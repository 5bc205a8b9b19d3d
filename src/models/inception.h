// Inception v3 (torchvision's Inception3 without the auxiliary classifier) and Inception v4
// (Szegedy et al. 2016, "Inception-v4, Inception-ResNet and the Impact of Residual Connections"),
// both for 299x299 inputs.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace trainbench::models {

struct Inception3Impl : torch::nn::Module {
  explicit Inception3Impl(int64_t num_classes = 1000);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};  // Conv2d_1a_3x3 ... Mixed_7c
  torch::nn::Dropout dropout{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Inception3);

// Stem, 4 x Inception-A, Reduction-A, 7 x Inception-B, Reduction-B, 3 x Inception-C; BN after every
// conv (eps 0.001), as the common PyTorch ports of the paper's network.
struct Inception4Impl : torch::nn::Module {
  explicit Inception4Impl(int64_t num_classes = 1000);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::Dropout dropout{nullptr};  // the paper's dropout, keep probability 0.8
  torch::nn::Linear last_linear{nullptr};
};
TORCH_MODULE(Inception4);

}  // namespace trainbench::models
