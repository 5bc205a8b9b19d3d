#include "models/convnet.h"

#include <stdexcept>

#include "models/layers.h"

namespace trainbench::models {
namespace {

torch::nn::Conv2d same_conv(int64_t in, int64_t out, int64_t kernel, int64_t groups) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).padding(kernel / 2).groups(groups).bias(false));
}

}  // namespace

ConvNetVariant parse_convnet_variant(const std::string& name) {
  if (name == "conv") return ConvNetVariant::conv;
  if (name == "separable") return ConvNetVariant::separable;
  if (name == "depthwise") return ConvNetVariant::depthwise;
  throw std::invalid_argument("unknown convnet variant '" + name + "' (expected conv, separable or depthwise)");
}

const char* to_string(ConvNetVariant variant) {
  switch (variant) {
    case ConvNetVariant::conv:
      return "conv";
    case ConvNetVariant::separable:
      return "separable";
    case ConvNetVariant::depthwise:
      return "depthwise";
  }
  return "?";
}

std::vector<ConvSpec> convnet_block(ConvNetVariant variant, int64_t kernel) {
  switch (variant) {
    case ConvNetVariant::conv:
      return {{kernel, false}};
    case ConvNetVariant::separable:
      return {{kernel, true}, {1, false}};
    case ConvNetVariant::depthwise:
      return {{kernel, true}};
  }
  return {};
}

ConvNetImpl::ConvNetImpl(const ConvNetOptions& o) : options(o) {
  if (o.kernel() < 1 || o.kernel() % 2 == 0) {
    throw std::invalid_argument("convnet kernel must be odd (padding k/2 keeps the resolution only then)");
  }
  const int64_t c = o.channels();
  stem = register_module("stem", same_conv(o.in_channels(), c, o.kernel(), 1));
  blocks = register_module("blocks", torch::nn::Sequential());
  const auto specs = convnet_block(o.variant(), o.kernel());
  for (int64_t i = 0; i < o.depth(); ++i) {
    Stack block;
    for (const auto& s : specs) block->push_back(same_conv(c, c, s.kernel, s.depthwise ? c : 1));
    blocks->push_back("block" + std::to_string(i), block);
  }
}

torch::Tensor ConvNetImpl::forward(torch::Tensor x) { return blocks->forward(stem->forward(x)); }

}  // namespace trainbench::models
