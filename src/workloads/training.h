// Pieces every training workload shares: optimizer construction, mixed precision, layouts.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "core/flops.h"
#include "core/precision.h"
#include "data/device_feed.h"
#include "data/loader.h"
#include "data/token_source.h"
#include "workloads/loss_scaler.h"
#include "workloads/workload.h"

namespace trainbench::detail {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::string& name, std::vector<torch::Tensor> params);

// Drops every gradient (set_to_none, as PyTorch 2's zero_grad default): no memset kernel per parameter.
void zero_grad(const std::vector<torch::Tensor>& params);

// Automatic mixed precision for the scope of one step: fp32 does nothing; bf16/fp16 enable autocast
// on the device, and leaving the scope clears the autocast cast cache as PyTorch's context manager does.
class AutocastScope {
 public:
  AutocastScope(const Precision& p, const DeviceSpec& device);
  explicit AutocastScope(const WorkloadOptions& o);  // the case's precision (parsed) on its device
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  bool gpu_ = false;
  at::DeviceType device_type_ = at::kCPU;  // autocast's per-device state is keyed by it
  bool prev_enabled_ = false;
  at::ScalarType prev_dtype_ = at::kFloat;
};

// Throws std::invalid_argument when this precision cannot run on this device.
void check_precision(const WorkloadOptions& o);

// The type a workload's float inputs are made in: the precision's for pure ones, else fp32 (autocast
// casts them where it computes).
at::ScalarType input_dtype(const Precision& p);
// Converts the floating-point parameters and buffers to `dtype` in place; integer buffers (BatchNorm's
// step counter) keep their type, as PyTorch's Module.to(dtype) does.
void to_dtype(torch::nn::Module& module, at::ScalarType dtype);

// Converts 4-d parameters and buffers to channels-last in place.
void to_channels_last(torch::nn::Module& module);
// The same on tensors (a TorchScript module's parameters and buffers), each converted in place.
void to_dtype(const std::vector<torch::Tensor>& tensors, at::ScalarType dtype);
void to_channels_last(const std::vector<torch::Tensor>& tensors);

// A workload whose training step is zero_grad, loss(forward()) under autocast, backward, optimizer
// step (fp16: scaled loss, unscaled gradients, the step skipped on inf/NaN; pure precisions: the loss
// taken in fp32 from the model's output); forward-only runs forward() alone, under no-grad, in eval mode. A subclass
// builds its model and synthetic batch on the device, then calls finish_setup.
class LossWorkload : public Workload {
 public:
  void step() override;
  int64_t samples_per_step() const override { return options_.batch; }
  std::string unit() const override { return unit_; }
  double flops_per_step() const override { return step_flops_.training(); }
  StepFlops step_flops() const override { return step_flops_; }
  int64_t parameters() const override { return parameters_; }
  int64_t tokens_per_step() const override { return options_.batch * tokens_per_sample_; }
  double last_loss() const override;
  int64_t skipped_steps() const override { return scaler_ ? scaler_->skipped_steps() : 0; }
  double loss_scale() const override { return scaler_ ? scaler_->scale_value() : Workload::loss_scale(); }
  std::vector<torch::Tensor> trainable_parameters() const override { return params_; }
  std::vector<torch::Tensor> model_buffers() const override { return buffers_; }
  void set_gradient_sync(GradientSync* sync) override { sync_ = sync; }
  void next_batch() override;
  double last_copy_wait_s() const override { return copy_wait_s_; }
  std::optional<LoaderStats> loader_stats() const override;
  void set_phase_observer(std::function<void(StepPhase)> observer) override { observer_ = std::move(observer); }

 protected:
  // Real data: starts the loader's threads on `source` (options_.loader_threads, 0: the default) and
  // takes the first batch, so the workload has an input before any step (the FLOP count and the first
  // step use it). Each next_batch() after a step then hands the loader's next batch, on the device, to
  // take_batch; a next_batch() before any step keeps the first batch, so every batch is trained on.
  void start_loader(std::shared_ptr<data::BatchSource> source);
  // Real data from a token file (options_.data): windows of `seq` tokens cut for `target`, checked
  // against `vocab` (classify: `classes` labels), with the case's data seed.
  void start_token_loader(data::TokenTarget target, int64_t seq, int64_t vocab, int64_t classes = 2);
  virtual void take_batch(std::vector<torch::Tensor>& tensors) {}
  LossWorkload(const WorkloadOptions& options, std::string unit);
  // `flops`: one step over the whole batch, per pass (a training step counts all three, a forward-only
  // step the forward). Sets the model's mode, builds the optimizer.
  // `tokens_per_sample` > 0 for sequence workloads (tokens/s is reported beside sequences/s).
  // `float_inputs`: the synthetic floating-point inputs, converted with the model under a pure
  // precision (integer inputs such as token ids stay as they are). Call after counting FLOPs.
  void finish_setup(torch::nn::Module& model, const StepFlops& flops, int64_t parameters, int64_t tokens_per_sample = 0,
                    const std::vector<torch::Tensor*>& float_inputs = {});
  // The same for a model that is not a torch::nn::Module (a TorchScript module): its trainable
  // parameters and its buffers, and how to set its mode (true: training).
  void finish_setup(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& buffers,
                    const std::function<void(bool)>& set_training, const StepFlops& flops, int64_t parameters,
                    int64_t tokens_per_sample, const std::vector<torch::Tensor*>& float_inputs);
  virtual torch::Tensor forward() = 0;
  // Call between building the model and drawing the synthetic batch (see WorkloadOptions::data_seed).
  void seed_batch() const;
  virtual torch::Tensor loss(const torch::Tensor& output) = 0;

  WorkloadOptions options_;
  Precision precision_;  // options_.precision, parsed once

 private:
  std::string unit_;
  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> buffers_;
  GradientSync* sync_ = nullptr;
  std::function<void(StepPhase)> observer_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<LossScaler> scaler_;      // fp16 mixed-precision training only
  std::unique_ptr<data::Loader> loader_;    // --data only
  std::unique_ptr<data::DeviceFeed> feed_;  // --data only: the loader's batches onto the device
  bool untrained_batch_ = false;            // the current batch has not been stepped on yet
  double copy_wait_s_ = 0.0;                // the last next_batch()'s wait for the device copy
  torch::Tensor last_;
  int64_t parameters_ = 0;
  int64_t tokens_per_sample_ = 0;
  StepFlops step_flops_;  // forward-only: the backward parts are zero
};

}  // namespace trainbench::detail
