// The model zoo: its table (cases/zoo.h) with a factory per model, and the FLOP count.
// Models know nothing of runners or results; a workload asks the registry for one by name.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cases/zoo.h"
#include "core/flops.h"

namespace trainbench::models {

// A zoo model's description (cases/zoo.h) and what builds it.
struct ModelInfo : ZooModel {
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
