// Building blocks shared by several model families, and the common weight initialisation.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace trainbench::models {

enum class Activation { none, relu, relu6 };

// Options for a bias-free 2-D convolution (every conv that a BatchNorm follows).
torch::nn::Conv2dOptions conv_options(int64_t in, int64_t out, torch::ExpandingArray<2> kernel,
                                      torch::ExpandingArray<2> stride = 1, torch::ExpandingArray<2> padding = 0,
                                      int64_t groups = 1);

// Conv (no bias) -> BatchNorm -> activation: torchvision's BasicConv2d / Conv2dNormActivation.
struct ConvBnActImpl : torch::nn::Module {
  explicit ConvBnActImpl(const torch::nn::Conv2dOptions& options, Activation activation = Activation::relu,
                         double bn_eps = 1e-5);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  Activation activation;
};
TORCH_MODULE(ConvBnAct);

// torchvision's BasicConv2d of GoogLeNet and Inception: conv (no bias), BN with eps 0.001, ReLU.
ConvBnAct basic_conv(int64_t in, int64_t out, torch::ExpandingArray<2> kernel, torch::ExpandingArray<2> stride = 1,
                     torch::ExpandingArray<2> padding = 0);

// Concatenates, along channels, the outputs of parallel branches fed the same input (an Inception module).
struct BranchesImpl : torch::nn::Module {
  BranchesImpl() = default;
  // Registers `branch` under `name`; returns *this so modules read as a list of branches.
  BranchesImpl& add(const std::string& name, torch::nn::Sequential branch);
  torch::Tensor forward(torch::Tensor x);

  std::vector<torch::nn::Sequential> branches;
};
TORCH_MODULE(Branches);

// A Sequential that can sit inside another Sequential: its forward is not a template.
struct StackImpl : torch::nn::SequentialImpl {
  using SequentialImpl::SequentialImpl;
  torch::Tensor forward(torch::Tensor x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(Stack);

// A linear layer as Python's nn.Linear runs it: at::linear, which multiplies a contiguous input of any
// rank as one addmm with the bias fused in. torch::nn::Linear's own forward (LibTorch 1.x's C++
// functional linear) takes matmul plus a second pass to add the bias when the input has more than two
// dimensions: an extra read and write of every output, which a PyTorch user's model does not pay.
// ReLU in place, as torchvision's classic CNNs build it.
inline torch::nn::ReLU inplace_relu() { return torch::nn::ReLU(torch::nn::ReLUOptions(true)); }

inline torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x) {
  return torch::linear(x, layer->weight, layer->bias);
}

// Kaiming-normal (fan_out, ReLU) convolutions with zero bias, BatchNorm weight 1 / bias 0,
// linear weights N(0, 0.01) with zero bias: what torchvision's CNNs use, and quick to draw.
void init_cnn_weights(torch::nn::Module& model);

}  // namespace trainbench::models
