// The fully-convolutional ablation: the ConvNet of models/convnet.h on synthetic images, with the mean
// of its squared output as the loss (no labels or classifier: only the convolutions' forward and
// backward cost is of interest).
#include <torch/torch.h>

#include <stdexcept>

#include "core/flops.h"
#include "models/convnet.h"
#include "models/registry.h"
#include "workloads/study_models.h"
#include "workloads/training.h"

namespace trainbench {
namespace {

class ConvNetWorkload final : public detail::LossWorkload {
 public:
  explicit ConvNetWorkload(const WorkloadOptions& o) : LossWorkload(o, "images/s") {
    const torch::Device dev = o.device.torch_device();
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

std::function<void(const std::string&)> odd_in_range(int64_t lo, int64_t hi) {
  auto in_range = int_in_range(lo, hi);
  return [in_range](const std::string& v) {
    in_range(v);
    if (std::stoll(v) % 2 == 0) throw std::invalid_argument("expected an odd kernel size ('same' padding k/2)");
  };
}

}  // namespace

WorkloadInfo convnet_workload_info() {
  WorkloadInfo w;
  w.name = "convnet";
  w.family = "ablation";
  w.unit = "images/s";
  w.input = "3x56x56";
  w.default_batch = 32;
  w.description = "Ablation: stem conv + `depth` conv / separable / depthwise blocks, nothing else; loss = mean square";
  const std::vector<std::string> variants = {"conv", "separable", "depthwise"};
  w.params = {
      {"variant", "conv", "block: conv (k x k), separable (depthwise k x k + pointwise 1 x 1), depthwise (k x k)",
       one_of(variants)},
      {"channels", "64", "channels of every block, 1 to 4096", int_in_range(1, 4096)},
      {"depth", "8", "blocks after the stem, 1 to 1000", int_in_range(1, 1000)},
      {"image", "56", "image height and width, 1 to 4096", int_in_range(1, 4096)},
      {"kernel", "3", "kernel size, odd, 1 to 31", odd_in_range(1, 31)},
  };
  w.make = [](const WorkloadOptions& o) -> std::unique_ptr<Workload> { return std::make_unique<ConvNetWorkload>(o); };
  // The HTML report draws the variants side by side, in this order.
  w.ablation = AblationInfo{"variant", variants, "Ablation: convolution, separable, depthwise"};
  return w;
}

}  // namespace trainbench
