// Pieces every training workload shares: optimizer construction, mixed precision, layouts.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "workloads/workload.h"

namespace trainbench::detail {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::string& name, std::vector<torch::Tensor> params);

// Drops every gradient (set_to_none, as PyTorch 2's zero_grad default): no memset kernel per parameter.
void zero_grad(const std::vector<torch::Tensor>& params);

// Automatic mixed precision for the scope of one step: fp32 does nothing; bf16/fp16 enable autocast
// on the device, and leaving the scope clears the autocast cast cache as PyTorch's context manager does.
class AutocastScope {
 public:
  AutocastScope(const WorkloadOptions& o);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  bool gpu_ = false;
  bool prev_enabled_ = false;
  at::ScalarType prev_dtype_ = at::kFloat;
};

// Throws std::invalid_argument when this precision cannot run on this device.
void check_precision(const WorkloadOptions& o);

// Converts 4-d parameters and buffers to channels-last in place.
void to_channels_last(torch::nn::Module& module);

}  // namespace trainbench::detail
