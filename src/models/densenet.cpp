#include "models/densenet.h"

#include "models/layers.h"

namespace trainbench::models {
namespace {

// BN-ReLU-1x1 conv (bottleneck to bn_size * growth) - BN-ReLU-3x3 conv (growth new channels).
torch::nn::Sequential dense_layer(int64_t in, int64_t growth_rate, int64_t bn_size) {
  torch::nn::Sequential l;
  l->push_back("norm1", torch::nn::BatchNorm2d(in));
  l->push_back("relu1", inplace_relu());
  l->push_back("conv1", torch::nn::Conv2d(conv_options(in, bn_size * growth_rate, 1)));
  l->push_back("norm2", torch::nn::BatchNorm2d(bn_size * growth_rate));
  l->push_back("relu2", inplace_relu());
  l->push_back("conv2", torch::nn::Conv2d(conv_options(bn_size * growth_rate, growth_rate, 3, 1, 1)));
  return l;
}

// Each layer sees the concatenation of the block input and every earlier layer's output.
struct DenseBlockImpl : torch::nn::Module {
  DenseBlockImpl(int64_t layers, int64_t in, int64_t growth_rate, int64_t bn_size) {
    for (int64_t i = 0; i < layers; ++i) {
      dense_layers.push_back(register_module("denselayer" + std::to_string(i + 1),
                                             dense_layer(in + i * growth_rate, growth_rate, bn_size)));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    std::vector<torch::Tensor> maps{x};
    for (auto& layer : dense_layers) maps.push_back(layer->forward(torch::cat(maps, 1)));
    return torch::cat(maps, 1);
  }
  std::vector<torch::nn::Sequential> dense_layers;
};
TORCH_MODULE(DenseBlock);

// BN-ReLU-1x1 conv halving the channels, then 2x2 average pool.
Stack transition(int64_t in, int64_t out) {
  Stack t;
  t->push_back("norm", torch::nn::BatchNorm2d(in));
  t->push_back("relu", inplace_relu());
  t->push_back("conv", torch::nn::Conv2d(conv_options(in, out, 1)));
  t->push_back("pool", torch::nn::AvgPool2d(torch::nn::AvgPool2dOptions(2).stride(2)));
  return t;
}

}  // namespace

DenseNetImpl::DenseNetImpl(int64_t growth_rate, const std::vector<int64_t>& block_config, int64_t num_init_features,
                           int64_t bn_size, int64_t num_classes) {
  torch::nn::Sequential f;
  f->push_back("conv0", torch::nn::Conv2d(conv_options(3, num_init_features, 7, 2, 3)));
  f->push_back("norm0", torch::nn::BatchNorm2d(num_init_features));
  f->push_back("relu0", inplace_relu());
  f->push_back("pool0", torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2).padding(1)));
  int64_t channels = num_init_features;
  for (size_t i = 0; i < block_config.size(); ++i) {
    f->push_back("denseblock" + std::to_string(i + 1), DenseBlock(block_config[i], channels, growth_rate, bn_size));
    channels += block_config[i] * growth_rate;
    if (i + 1 != block_config.size()) {
      f->push_back("transition" + std::to_string(i + 1), transition(channels, channels / 2));
      channels /= 2;
    }
  }
  f->push_back("norm5", torch::nn::BatchNorm2d(channels));
  features = register_module("features", f);
  classifier = register_module("classifier", torch::nn::Linear(channels, num_classes));
  init_cnn_weights(*this);
}

torch::Tensor DenseNetImpl::forward(torch::Tensor x) {
  x = features->forward(x).relu_();  // in place, as torchvision's F.relu(inplace=True)
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return classifier->forward(x);
}

}  // namespace trainbench::models
