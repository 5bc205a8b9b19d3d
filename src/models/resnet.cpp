#include "models/resnet.h"

#include "models/layers.h"

namespace trainbench::models {
namespace {

int64_t expansion_of(ResNetBlock block) { return block == ResNetBlock::basic ? 1 : 4; }

// Projection shortcut of torchvision's v1 blocks: 1x1 conv with the block's stride, then BN.
torch::nn::Sequential projection(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Sequential(torch::nn::Conv2d(conv_options(in, out, 1, stride)), torch::nn::BatchNorm2d(out));
}

// In-place ReLU and residual sum where torchvision has them (ReLU(inplace=True), `out += identity`):
// legal because BatchNorm's backward reads its input, not its output, and a convolution's backward
// reads its input and weight. Each saves allocating one activation-sized tensor per ReLU and per sum
// in the forward pass (tests/memory/test_memory.cpp measures it against torchvision's layout).
struct BasicBlockImpl : torch::nn::Module {
  BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride) {
    conv1 = register_module("conv1", torch::nn::Conv2d(conv_options(inplanes, planes, 3, stride, 1)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(planes));
    conv2 = register_module("conv2", torch::nn::Conv2d(conv_options(planes, planes, 3, 1, 1)));
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(planes));
    if (stride != 1 || inplanes != planes) {
      downsample = register_module("downsample", projection(inplanes, planes, stride));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    auto out = bn1->forward(conv1->forward(x)).relu_();
    out = bn2->forward(conv2->forward(out));
    out += downsample ? downsample->forward(x) : x;
    return out.relu_();
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(BasicBlock);

struct BottleneckImpl : torch::nn::Module {
  BottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride) {
    const int64_t out = planes * 4;
    conv1 = register_module("conv1", torch::nn::Conv2d(conv_options(inplanes, planes, 1)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(planes));
    conv2 = register_module("conv2", torch::nn::Conv2d(conv_options(planes, planes, 3, stride, 1)));
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(planes));
    conv3 = register_module("conv3", torch::nn::Conv2d(conv_options(planes, out, 1)));
    bn3 = register_module("bn3", torch::nn::BatchNorm2d(out));
    if (stride != 1 || inplanes != out) downsample = register_module("downsample", projection(inplanes, out, stride));
  }
  torch::Tensor forward(torch::Tensor x) {
    auto out = bn1->forward(conv1->forward(x)).relu_();
    out = bn2->forward(conv2->forward(out)).relu_();
    out = bn3->forward(conv3->forward(out));
    out += downsample ? downsample->forward(x) : x;
    return out.relu_();
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(Bottleneck);

// Pre-activation bottleneck: BN-ReLU, then the convs; a projection shortcut (no BN) reads the
// pre-activated input, as in He et al. 2016 and tf_cnn_benchmarks' bottleneck_block_v2, which puts a
// stage's stride on the first 1x1 conv (and the shortcut), not on the 3x3.
struct PreActBottleneckImpl : torch::nn::Module {
  PreActBottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride) {
    const int64_t out = planes * 4;
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(inplanes));
    conv1 = register_module("conv1", torch::nn::Conv2d(conv_options(inplanes, planes, 1, stride)));
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(planes));
    conv2 = register_module("conv2", torch::nn::Conv2d(conv_options(planes, planes, 3, 1, 1)));
    bn3 = register_module("bn3", torch::nn::BatchNorm2d(planes));
    conv3 = register_module("conv3", torch::nn::Conv2d(conv_options(planes, out, 1)));
    if (stride != 1 || inplanes != out) {
      shortcut = register_module("shortcut", torch::nn::Conv2d(conv_options(inplanes, out, 1, stride)));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    auto preact = bn1->forward(x).relu_();
    auto out = conv1->forward(preact);
    out = conv2->forward(bn2->forward(out).relu_());
    out = conv3->forward(bn3->forward(out).relu_());
    out += shortcut ? shortcut->forward(preact) : x;
    return out;
  }
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr}, shortcut{nullptr};
};
TORCH_MODULE(PreActBottleneck);

}  // namespace

ResNetImpl::ResNetImpl(ResNetBlock block, const std::vector<int64_t>& layers, int64_t num_classes) : block_(block) {
  TORCH_CHECK(layers.size() == 4, "ResNet needs four stages, got ", layers.size());
  conv1 = register_module("conv1", torch::nn::Conv2d(conv_options(3, 64, 7, 2, 3)));
  bn1 = register_module("bn1", torch::nn::BatchNorm2d(64));
  layer1 = register_module("layer1", make_layer(64, layers[0], 1));
  layer2 = register_module("layer2", make_layer(128, layers[1], 2));
  layer3 = register_module("layer3", make_layer(256, layers[2], 2));
  layer4 = register_module("layer4", make_layer(512, layers[3], 2));
  if (block == ResNetBlock::preact_bottleneck) post_bn = register_module("post_bn", torch::nn::BatchNorm2d(inplanes_));
  fc = register_module("fc", torch::nn::Linear(inplanes_, num_classes));
  init_cnn_weights(*this);
}

torch::nn::Sequential ResNetImpl::make_layer(int64_t planes, int64_t blocks, int64_t stride) {
  torch::nn::Sequential layer;
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t s = i == 0 ? stride : 1;
    switch (block_) {
      case ResNetBlock::basic:
        layer->push_back(BasicBlock(inplanes_, planes, s));
        break;
      case ResNetBlock::bottleneck:
        layer->push_back(Bottleneck(inplanes_, planes, s));
        break;
      case ResNetBlock::preact_bottleneck:
        layer->push_back(PreActBottleneck(inplanes_, planes, s));
        break;
    }
    inplanes_ = planes * expansion_of(block_);
  }
  return layer;
}

torch::Tensor ResNetImpl::forward(torch::Tensor x) {
  // The v2 stem keeps conv-BN-ReLU (as tf_cnn_benchmarks): the first block then pre-activates the pooled map.
  x = bn1->forward(conv1->forward(x)).relu_();
  x = torch::max_pool2d(x, 3, 2, 1);
  x = layer4->forward(layer3->forward(layer2->forward(layer1->forward(x))));
  if (post_bn) x = post_bn->forward(x).relu_();
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return fc->forward(x);
}

}  // namespace trainbench::models
