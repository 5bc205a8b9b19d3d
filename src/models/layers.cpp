#include "models/layers.h"

namespace trainbench::models {

torch::nn::Conv2dOptions conv_options(int64_t in, int64_t out, torch::ExpandingArray<2> kernel,
                                      torch::ExpandingArray<2> stride, torch::ExpandingArray<2> padding,
                                      int64_t groups) {
  return torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).groups(groups).bias(false);
}

ConvBnActImpl::ConvBnActImpl(const torch::nn::Conv2dOptions& options, Activation activation, double bn_eps)
    : activation(activation) {
  conv = register_module("conv", torch::nn::Conv2d(options));
  bn = register_module("bn", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(options.out_channels()).eps(bn_eps)));
}

torch::Tensor ConvBnActImpl::forward(torch::Tensor x) {
  x = bn->forward(conv->forward(x));
  switch (activation) {
    case Activation::relu:
      return torch::relu_(x);
    case Activation::relu6:
      return torch::hardtanh_(x, 0.0, 6.0);
    case Activation::none:
      break;
  }
  return x;
}

ConvBnAct basic_conv(int64_t in, int64_t out, torch::ExpandingArray<2> kernel, torch::ExpandingArray<2> stride,
                     torch::ExpandingArray<2> padding) {
  return ConvBnAct(conv_options(in, out, kernel, stride, padding), Activation::relu, 1e-3);
}

BranchesImpl& BranchesImpl::add(const std::string& name, torch::nn::Sequential branch) {
  branches.push_back(register_module(name, std::move(branch)));
  return *this;
}

torch::Tensor BranchesImpl::forward(torch::Tensor x) {
  std::vector<torch::Tensor> outputs;
  outputs.reserve(branches.size());
  for (auto& branch : branches) outputs.push_back(branch->forward(x));
  return torch::cat(outputs, 1);
}

void init_cnn_weights(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (auto& module : model.modules(/*include_self=*/false)) {
    if (auto* conv = module->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      if (conv->bias.defined()) conv->bias.zero_();
    } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
      bn->weight.fill_(1.0);
      bn->bias.zero_();
    } else if (auto* linear = module->as<torch::nn::Linear>()) {
      linear->weight.normal_(0.0, 0.01);
      if (linear->bias.defined()) linear->bias.zero_();
    }
  }
}

}  // namespace trainbench::models
