// The fully-convolutional ablation network of the seed study: a stem convolution from RGB, then
// `depth` blocks that keep channels and resolution, and nothing else — no activations, normalisation,
// pooling or dense layers — so a step's cost is the convolutions alone and the three block variants
// compare like for like.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::models {

enum class ConvNetVariant {
  conv,       // A: a plain k x k convolution
  separable,  // B: a depthwise k x k convolution, then a pointwise 1 x 1
  depthwise,  // C: the depthwise k x k convolution alone
};

// "conv" | "separable" | "depthwise"; throws std::invalid_argument for anything else.
ConvNetVariant parse_convnet_variant(const std::string& name);
const char* to_string(ConvNetVariant variant);

struct ConvNetOptions {
  TORCH_ARG(ConvNetVariant, variant) = ConvNetVariant::conv;
  TORCH_ARG(int64_t, channels) = 64;
  TORCH_ARG(int64_t, depth) = 8;   // blocks after the stem
  TORCH_ARG(int64_t, kernel) = 3;  // odd, so that padding k/2 keeps the resolution
  TORCH_ARG(int64_t, in_channels) = 3;
};

// One convolution of a block: its kernel size and whether it is depthwise (groups = channels).
struct ConvSpec {
  int64_t kernel;
  bool depthwise;
};
// The convolutions of one block of `variant` (kernel k): the variants as data.
std::vector<ConvSpec> convnet_block(ConvNetVariant variant, int64_t kernel);

// Every convolution has stride 1, 'same' padding k/2 and no bias: without activations a bias only
// shifts the mean, and leaving it out keeps the parameter count to the convolution weights.
struct ConvNetImpl : torch::nn::Module {
  explicit ConvNetImpl(const ConvNetOptions& options = {});
  // [N, in_channels, H, W] -> [N, channels, H, W]
  torch::Tensor forward(torch::Tensor x);

  ConvNetOptions options;
  torch::nn::Conv2d stem{nullptr};
  torch::nn::Sequential blocks{nullptr};
};
TORCH_MODULE(ConvNet);

}  // namespace trainbench::models
