// Image classification workloads: any model of the CNN zoo, cross-entropy on synthetic images.
#include <torch/torch.h>

#include <stdexcept>

#include "core/flops.h"
#include "models/registry.h"
#include "workloads/training.h"
#include "workloads/workload.h"

namespace trainbench {
namespace {

class CnnWorkload final : public Workload {
 public:
  CnnWorkload(const models::ModelInfo& info, const WorkloadOptions& o) : options_(o) {
    detail::check_precision(o);
    const torch::Device dev = o.device.torch_device();
    model_ = info.make();
    model_.ptr()->to(dev);
    parameters_ = models::parameter_count(*model_.ptr());
    std::vector<int64_t> shape = {o.batch};
    shape.insert(shape.end(), info.input_shape.begin(), info.input_shape.end());
    input_ = torch::randn(shape, torch::TensorOptions().device(dev));
    labels_ = torch::randint(0, info.num_classes, {o.batch}, torch::TensorOptions().dtype(torch::kLong).device(dev));
    if (o.layout == "nhwc") {
      detail::to_channels_last(*model_.ptr());
      input_ = input_.contiguous(at::MemoryFormat::ChannelsLast);
    }
    const double fwd = models::forward_flops(model_, info.input_shape, o.batch);
    flops_ = o.forward_only ? fwd : training_flops(fwd);
    params_ = model_.ptr()->parameters();
    if (o.forward_only) {
      model_.ptr()->eval();
    } else {
      optimizer_ = detail::make_optimizer(o.optimizer, params_);
    }
  }

  void step() override {
    if (options_.forward_only) {
      torch::NoGradGuard no_grad;
      detail::AutocastScope amp(options_);
      last_ = model_.forward(input_);
      return;
    }
    detail::zero_grad(params_);
    torch::Tensor loss;
    {
      detail::AutocastScope amp(options_);
      loss = torch::nn::functional::cross_entropy(model_.forward(input_), labels_);
    }
    loss.backward();
    optimizer_->step();
    last_ = loss;
  }

  int64_t samples_per_step() const override { return options_.batch; }
  std::string unit() const override { return "images/s"; }
  double flops_per_step() const override { return flops_; }
  int64_t parameters() const override { return parameters_; }
  double last_loss() const override { return last_.defined() && last_.dim() == 0 ? last_.item<double>() : 0.0; }

 private:
  WorkloadOptions options_;
  torch::nn::AnyModule model_;
  std::vector<torch::Tensor> params_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  torch::Tensor input_, labels_, last_;
  int64_t parameters_ = 0;
  double flops_ = 0.0;
};

}  // namespace

std::unique_ptr<Workload> make_cnn_workload(const models::ModelInfo& info, const WorkloadOptions& options) {
  return std::make_unique<CnnWorkload>(info, options);
}

}  // namespace trainbench
