// The model zoo: name -> factory, input shape, default batch, FLOP count.
// Models know nothing of runners or results; a workload asks the registry for one by name.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/flops.h"

namespace trainbench::models {

struct ModelInfo {
  std::string name;                  // e.g. "resnet50"
  std::string family;                // "cnn" for the tf_cnn_benchmarks zoo
  std::vector<int64_t> input_shape;  // one sample, e.g. {3, 224, 224}
  int64_t default_batch = 32;        // tf_cnn_benchmarks' usual per-device batch
  int64_t num_classes = 1000;
  std::string description;  // one line for `trainbench list`
  // Builds a fresh model (random init, training mode) whose forward maps [N, input_shape...] -> [N, num_classes].
  std::function<torch::nn::AnyModule()> make;
};

// Every registered model, in the order `trainbench list` shows them.
const std::vector<ModelInfo>& all_models();
// nullptr when there is no model of that name.
const ModelInfo* find_model(const std::string& name);

int64_t parameter_count(torch::nn::Module& module);
// FLOPs of one training step of `model` on a batch of `batch` samples of `input_shape`: forward,
// backward-data and backward-weights counted per layer from the layer shapes (core/flops.h) during
// one forward pass with gradients enabled on a batch of 1 in eval mode (the input needs no
// gradient, as the synthetic batch), then scaled by the batch (every counted layer is linear in it).
// The model's training mode is restored.
StepFlops model_flops(torch::nn::AnyModule& model, const std::vector<int64_t>& input_shape, int64_t batch);
// The forward part of model_flops.
double forward_flops(torch::nn::AnyModule& model, const std::vector<int64_t>& input_shape, int64_t batch);

}  // namespace trainbench::models
