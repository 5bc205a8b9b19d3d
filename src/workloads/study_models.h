// The study's non-CNN workloads, one file each (convnet.cpp, bilstm.cpp, bert.cpp), and the step they
// share. study.cpp lists them.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "workloads/registry.h"
#include "workloads/workload.h"

namespace trainbench {

WorkloadInfo convnet_workload_info();
WorkloadInfo bilstm_workload_info();
WorkloadInfo bert_workload_info();

namespace detail {

// A workload whose training step is zero_grad, loss(forward()) under autocast, backward, optimizer
// step; forward-only runs forward() alone, under no-grad, in eval mode. A subclass builds its model
// and synthetic batch on the device, then calls finish_setup.
class LossWorkload : public Workload {
 public:
  void step() override;
  int64_t samples_per_step() const override { return options_.batch; }
  std::string unit() const override { return unit_; }
  double flops_per_step() const override { return flops_; }
  int64_t parameters() const override { return parameters_; }
  double last_loss() const override;

 protected:
  LossWorkload(const WorkloadOptions& options, std::string unit);
  // `forward_flops`: one forward pass over the whole batch. Sets the model's mode, builds the optimizer.
  void finish_setup(torch::nn::Module& model, double forward_flops, int64_t parameters);
  virtual torch::Tensor forward() = 0;
  virtual torch::Tensor loss(const torch::Tensor& output) = 0;

  WorkloadOptions options_;

 private:
  std::string unit_;
  std::vector<torch::Tensor> params_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  torch::Tensor last_;
  int64_t parameters_ = 0;
  double flops_ = 0.0;
};

}  // namespace detail
}  // namespace trainbench
