#include "models/mobilenet.h"

#include "models/layers.h"

namespace trainbench::models {
namespace {

struct InvertedResidualImpl : torch::nn::Module {
  InvertedResidualImpl(int64_t in, int64_t out, int64_t stride, int64_t expand_ratio)
      : use_residual(stride == 1 && in == out) {
    const int64_t hidden = in * expand_ratio;
    torch::nn::Sequential c;
    if (expand_ratio != 1) c->push_back(ConvBnAct(conv_options(in, hidden, 1), Activation::relu6));
    c->push_back(ConvBnAct(conv_options(hidden, hidden, 3, stride, 1, hidden), Activation::relu6));  // depthwise
    c->push_back(ConvBnAct(conv_options(hidden, out, 1), Activation::none));                         // linear
    conv = register_module("conv", c);
  }
  torch::Tensor forward(torch::Tensor x) { return use_residual ? x + conv->forward(x) : conv->forward(x); }

  torch::nn::Sequential conv{nullptr};
  bool use_residual;
};
TORCH_MODULE(InvertedResidual);

}  // namespace

MobileNetV1Impl::MobileNetV1Impl(int64_t num_classes) {
  struct Separable {
    int64_t in, out, stride;
  };
  static const Separable kBlocks[] = {{32, 64, 1},   {64, 128, 2},   {128, 128, 1},  {128, 256, 2}, {256, 256, 1},
                                      {256, 512, 2}, {512, 512, 1},  {512, 512, 1},  {512, 512, 1}, {512, 512, 1},
                                      {512, 512, 1}, {512, 1024, 2}, {1024, 1024, 1}};
  torch::nn::Sequential f;
  f->push_back(ConvBnAct(conv_options(3, 32, 3, 2, 1)));
  for (const auto& b : kBlocks) {
    f->push_back(ConvBnAct(conv_options(b.in, b.in, 3, b.stride, 1, /*groups=*/b.in)));
    f->push_back(ConvBnAct(conv_options(b.in, b.out, 1)));
  }
  features = register_module("features", f);
  fc = register_module("fc", torch::nn::Linear(1024, num_classes));
  init_cnn_weights(*this);
}

torch::Tensor MobileNetV1Impl::forward(torch::Tensor x) {
  x = torch::adaptive_avg_pool2d(features->forward(x), {1, 1}).flatten(1);
  return fc->forward(x);
}

MobileNetV2Impl::MobileNetV2Impl(int64_t num_classes) {
  // expansion t, output channels c, repeats n, first stride s (the paper's Table 2)
  struct Stage {
    int64_t t, c, n, s;
  };
  static const Stage kStages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  torch::nn::Sequential f;
  int64_t in = 32;
  f->push_back(ConvBnAct(conv_options(3, in, 3, 2, 1), Activation::relu6));
  for (const auto& st : kStages) {
    for (int64_t i = 0; i < st.n; ++i) {
      f->push_back(InvertedResidual(in, st.c, i == 0 ? st.s : 1, st.t));
      in = st.c;
    }
  }
  f->push_back(ConvBnAct(conv_options(in, 1280, 1), Activation::relu6));
  features = register_module("features", f);
  dropout = register_module("dropout", torch::nn::Dropout(0.2));
  classifier = register_module("classifier", torch::nn::Linear(1280, num_classes));
  init_cnn_weights(*this);
}

torch::Tensor MobileNetV2Impl::forward(torch::Tensor x) {
  x = torch::adaptive_avg_pool2d(features->forward(x), {1, 1}).flatten(1);
  return classifier->forward(dropout->forward(x));
}

}  // namespace trainbench::models
