// The fully-convolutional ablation: the ConvNet of models/convnet.h on synthetic images, with the mean
// of its squared output as the loss (no labels or classifier: only the convolutions' forward and
// backward cost is of interest).
#include <torch/torch.h>

#include <stdexcept>

#include "core/flops.h"
#include "models/convnet.h"
#include "models/registry.h"
#include "workloads/registry.h"
#include "workloads/training.h"

namespace trainbench {
namespace {

class ConvNetWorkload final : public detail::LossWorkload {
 public:
  explicit ConvNetWorkload(const WorkloadOptions& o) : LossWorkload(o, "images/s") {
    const torch::Device dev = torch_device(o.device);
    const int64_t image = param_int(o.params, "image");
    model_ = models::ConvNet(models::ConvNetOptions()
                                 .variant(models::parse_convnet_variant(param_str(o.params, "variant")))
                                 .channels(param_int(o.params, "channels"))
                                 .depth(param_int(o.params, "depth"))
                                 .kernel(param_int(o.params, "kernel")));
    model_->to(dev);
    seed_batch();
    input_ = torch::randn({o.batch, 3, image, image}, torch::TensorOptions().device(dev));
    if (o.layout == Layout::nhwc) {
      detail::to_channels_last(*model_);
      input_ = input_.contiguous(at::MemoryFormat::ChannelsLast);
    }
    // Every convolution is linear in the batch: one sample's count times the batch is exact.
    StepFlops one;
    {
      torch::AutoGradMode grad(true);  // the backward part follows which operands require a gradient
      const auto sample = input_.narrow(0, 0, 1);
      one = count_step_flops([&] { model_->forward(sample); });
    }
    finish_setup(*model_, one.scaled(static_cast<double>(o.batch)), models::parameter_count(*model_), 0, {&input_});
  }

 private:
  torch::Tensor forward() override { return model_->forward(input_); }
  // The mean of the squared output. A plain mean is unbounded below for a network this linear: SGD
  // with momentum drives it to -inf and NaN within ~1,400 steps at the defaults. The square costs one
  // element-wise op and keeps it bounded; the convolutions' backward work is the same either way.
  torch::Tensor loss(const torch::Tensor& output) override { return output.square().mean(); }

  models::ConvNet model_{nullptr};
  torch::Tensor input_;
};

}  // namespace

std::unique_ptr<Workload> make_convnet_workload(const WorkloadOptions& o) {
  return std::make_unique<ConvNetWorkload>(o);
}

}  // namespace trainbench
