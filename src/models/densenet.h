// DenseNet-BC (Huang et al. 2017) as torchvision defines it; densenet121 = growth 32, blocks {6, 12, 24, 16}.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace trainbench::models {

struct DenseNetImpl : torch::nn::Module {
  DenseNetImpl(int64_t growth_rate, const std::vector<int64_t>& block_config, int64_t num_init_features,
               int64_t bn_size = 4, int64_t num_classes = 1000);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};  // ends with norm5
  torch::nn::Linear classifier{nullptr};
};
TORCH_MODULE(DenseNet);

}  // namespace trainbench::models
