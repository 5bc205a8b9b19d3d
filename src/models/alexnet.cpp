#include "models/alexnet.h"

#include "models/layers.h"

namespace trainbench::models {
namespace {

torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding));
}
torch::nn::MaxPool2d pool() { return torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2)); }

}  // namespace

AlexNetImpl::AlexNetImpl(int64_t num_classes) {
  features = register_module("features", torch::nn::Sequential(conv(3, 64, 11, 4, 2), inplace_relu(), pool(),   //
                                                               conv(64, 192, 5, 1, 2), inplace_relu(), pool(),  //
                                                               conv(192, 384, 3, 1, 1), inplace_relu(),         //
                                                               conv(384, 256, 3, 1, 1), inplace_relu(),         //
                                                               conv(256, 256, 3, 1, 1), inplace_relu(), pool()));
  classifier = register_module(
      "classifier", torch::nn::Sequential(torch::nn::Dropout(0.5), torch::nn::Linear(256 * 6 * 6, 4096), inplace_relu(),
                                          torch::nn::Dropout(0.5), torch::nn::Linear(4096, 4096), inplace_relu(),
                                          torch::nn::Linear(4096, num_classes)));
  init_cnn_weights(*this);
}

torch::Tensor AlexNetImpl::forward(torch::Tensor x) {
  x = torch::adaptive_avg_pool2d(features->forward(x), {6, 6}).flatten(1);
  return classifier->forward(x);
}

}  // namespace trainbench::models
