// GoogLeNet (Inception v1) as torchvision defines it, without the auxiliary classifiers and
// without input transformation (transform_input = false).
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace trainbench::models {

struct GoogLeNetImpl : torch::nn::Module {
  explicit GoogLeNetImpl(int64_t num_classes = 1000);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::Dropout dropout{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(GoogLeNet);

}  // namespace trainbench::models
