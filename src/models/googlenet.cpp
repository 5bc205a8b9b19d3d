#include "models/googlenet.h"

#include "models/layers.h"

namespace trainbench::models {
namespace {

using torch::nn::Sequential;

torch::nn::MaxPool2d ceil_pool(int64_t kernel, int64_t stride, int64_t padding = 0) {
  return torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(kernel).stride(stride).padding(padding).ceil_mode(true));
}

// One Inception module: 1x1 | 1x1 -> 3x3 | 1x1 -> "5x5" | 3x3 max pool -> 1x1, concatenated.
// torchvision's "5x5" branch uses a 3x3 kernel; kept so the parameter count matches it.
Branches inception(int64_t in, int64_t ch1x1, int64_t ch3x3red, int64_t ch3x3, int64_t ch5x5red, int64_t ch5x5,
                   int64_t pool_proj) {
  Branches b;
  b->add("branch1", Sequential(basic_conv(in, ch1x1, 1)))
      .add("branch2", Sequential(basic_conv(in, ch3x3red, 1), basic_conv(ch3x3red, ch3x3, 3, 1, 1)))
      .add("branch3", Sequential(basic_conv(in, ch5x5red, 1), basic_conv(ch5x5red, ch5x5, 3, 1, 1)))
      .add("branch4", Sequential(ceil_pool(3, 1, 1), basic_conv(in, pool_proj, 1)));
  return b;
}

}  // namespace

GoogLeNetImpl::GoogLeNetImpl(int64_t num_classes) {
  Sequential f;
  f->push_back("conv1", basic_conv(3, 64, 7, 2, 3));
  f->push_back("maxpool1", ceil_pool(3, 2));
  f->push_back("conv2", basic_conv(64, 64, 1));
  f->push_back("conv3", basic_conv(64, 192, 3, 1, 1));
  f->push_back("maxpool2", ceil_pool(3, 2));
  f->push_back("inception3a", inception(192, 64, 96, 128, 16, 32, 32));
  f->push_back("inception3b", inception(256, 128, 128, 192, 32, 96, 64));
  f->push_back("maxpool3", ceil_pool(3, 2));
  f->push_back("inception4a", inception(480, 192, 96, 208, 16, 48, 64));
  f->push_back("inception4b", inception(512, 160, 112, 224, 24, 64, 64));
  f->push_back("inception4c", inception(512, 128, 128, 256, 24, 64, 64));
  f->push_back("inception4d", inception(512, 112, 144, 288, 32, 64, 64));
  f->push_back("inception4e", inception(528, 256, 160, 320, 32, 128, 128));
  f->push_back("maxpool4", ceil_pool(2, 2));
  f->push_back("inception5a", inception(832, 256, 160, 320, 32, 128, 128));
  f->push_back("inception5b", inception(832, 384, 192, 384, 48, 128, 128));
  features = register_module("features", f);
  dropout = register_module("dropout", torch::nn::Dropout(0.2));
  fc = register_module("fc", torch::nn::Linear(1024, num_classes));
  init_cnn_weights(*this);
}

torch::Tensor GoogLeNetImpl::forward(torch::Tensor x) {
  x = torch::adaptive_avg_pool2d(features->forward(x), {1, 1}).flatten(1);
  return fc->forward(dropout->forward(x));
}

}  // namespace trainbench::models
