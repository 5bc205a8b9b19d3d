#include "workloads/study.h"

#include "core/flops.h"
#include "workloads/study_models.h"
#include "workloads/training.h"

namespace trainbench {

std::vector<WorkloadInfo> study_workloads() {
  return {convnet_workload_info(), bilstm_workload_info(), bert_workload_info()};
}

namespace detail {

LossWorkload::LossWorkload(const WorkloadOptions& options, std::string unit)
    : options_(options), unit_(std::move(unit)) {
  check_precision(options_);
}

void LossWorkload::finish_setup(torch::nn::Module& model, double forward_flops, int64_t parameters) {
  parameters_ = parameters;
  flops_ = options_.forward_only ? forward_flops : training_flops(forward_flops);
  params_ = model.parameters();
  if (options_.forward_only) {
    model.eval();
  } else {
    model.train();
    optimizer_ = make_optimizer(options_.optimizer, params_);
  }
}

void LossWorkload::step() {
  if (options_.forward_only) {
    torch::NoGradGuard no_grad;
    AutocastScope amp(options_);
    forward();
    return;
  }
  zero_grad(params_);
  torch::Tensor l;
  {
    AutocastScope amp(options_);
    l = loss(forward());
  }
  l.backward();
  optimizer_->step();
  last_ = l.detach();
}

double LossWorkload::last_loss() const { return last_.defined() ? last_.item<double>() : 0.0; }

}  // namespace detail
}  // namespace trainbench
