// Dynamic loss scaling for fp16 mixed precision, with the semantics of PyTorch's GradScaler: multiply
// the loss by a large scale so small fp16 gradients do not flush to zero; divide the gradients by it
// before the optimizer step; skip any step whose gradients hold an inf or NaN and shrink the scale;
// grow it again after `growth_interval` clean steps in a row.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace trainbench {

struct LossScalerOptions {
  double init_scale = 65536.0;  // 2^16, PyTorch's default
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class LossScaler {
 public:
  explicit LossScaler(LossScalerOptions o = {});

  // The loss times the current scale: call backward() on this instead of the loss.
  torch::Tensor scale(const torch::Tensor& loss) const;
  // Divides every defined gradient by the scale, in place. True when all of them are finite.
  // One device synchronisation (reading the verdict), as GradScaler.step has.
  bool unscale(const std::vector<torch::Tensor>& params);
  // The scale for the next step: backoff after a non-finite gradient, growth after growth_interval
  // finite steps in a row. Counts the skipped step.
  void update(bool found_non_finite);
  // unscale, the optimizer step unless a gradient was not finite, update. True when the step ran.
  bool step(torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& params);

  double scale_value() const { return scale_; }
  int64_t skipped_steps() const { return skipped_; }
  int64_t growth_tracker() const { return growth_tracker_; }

 private:
  LossScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace trainbench
