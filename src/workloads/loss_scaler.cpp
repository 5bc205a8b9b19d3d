#include "workloads/loss_scaler.h"

#include <cmath>

namespace trainbench {

LossScaler::LossScaler(LossScalerOptions o) : options_(o), scale_(o.init_scale) {}

torch::Tensor LossScaler::scale(const torch::Tensor& loss) const { return loss * scale_; }

bool LossScaler::unscale(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads;
  grads.reserve(params.size());
  for (const auto& p : params) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return true;
  const auto flag_options = torch::TensorOptions().dtype(torch::kFloat).device(grads.front().device());
  torch::Tensor found = torch::zeros({1}, flag_options);
  if (grads.front().is_cuda()) {
    // GradScaler's fused kernel: one launch for every gradient (CUDA and ROCm builds; LibTorch 1.13
    // has no CPU kernel for it, hence the loop below, which the CPU tests exercise).
    const torch::Tensor inv_scale = torch::full({1}, 1.0 / scale_, flag_options);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found, inv_scale);
  } else {
    const double inv_scale = 1.0 / scale_;
    for (auto& g : grads) {
      g.mul_(inv_scale);
      found.add_(g.isfinite().logical_not().any().to(torch::kFloat));
    }
  }
  return found.item<float>() == 0.0f;
}

void LossScaler::update(bool found_non_finite) {
  if (found_non_finite) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
    ++skipped_;
    return;
  }
  if (++growth_tracker_ >= options_.growth_interval) {
    const double grown = scale_ * options_.growth_factor;
    if (std::isfinite(grown)) scale_ = grown;  // as _amp_update_scale_: never grow to infinity
    growth_tracker_ = 0;
  }
}

bool LossScaler::step(torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& params) {
  const bool finite = unscale(params);
  if (finite) optimizer.step();
  update(!finite);
  return finite;
}

}  // namespace trainbench
