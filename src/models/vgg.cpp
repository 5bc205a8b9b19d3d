#include "models/vgg.h"

#include "models/layers.h"

namespace trainbench::models {

VGGImpl::VGGImpl(const std::vector<int64_t>& convs_per_stage, int64_t num_classes) {
  static const int64_t kStageWidths[] = {64, 128, 256, 512, 512};
  TORCH_CHECK(convs_per_stage.size() == 5, "VGG needs five stages, got ", convs_per_stage.size());
  torch::nn::Sequential f;
  int64_t in = 3;
  for (size_t stage = 0; stage < 5; ++stage) {
    for (int64_t i = 0; i < convs_per_stage[stage]; ++i) {
      f->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, kStageWidths[stage], 3).padding(1)));
      f->push_back(inplace_relu());
      in = kStageWidths[stage];
    }
    f->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2)));
  }
  features = register_module("features", f);
  classifier = register_module(
      "classifier", torch::nn::Sequential(torch::nn::Linear(512 * 7 * 7, 4096), inplace_relu(), torch::nn::Dropout(0.5),
                                          torch::nn::Linear(4096, 4096), inplace_relu(), torch::nn::Dropout(0.5),
                                          torch::nn::Linear(4096, num_classes)));
  init_cnn_weights(*this);
}

torch::Tensor VGGImpl::forward(torch::Tensor x) {
  x = torch::adaptive_avg_pool2d(features->forward(x), {7, 7}).flatten(1);
  return classifier->forward(x);
}

}  // namespace trainbench::models
