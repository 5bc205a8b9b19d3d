// Image classification workloads: any model of the CNN zoo, cross-entropy on synthetic images.
#include <torch/torch.h>

#include "models/registry.h"
#include "workloads/training.h"
#include "workloads/workload.h"

namespace trainbench {
namespace {

class CnnWorkload final : public detail::LossWorkload {
 public:
  CnnWorkload(const models::ModelInfo& info, const WorkloadOptions& o) : LossWorkload(o, "images/s") {
    const torch::Device dev = o.device.torch_device();
    model_ = info.make();
    model_.ptr()->to(dev);
    std::vector<int64_t> shape = {o.batch};
    shape.insert(shape.end(), info.input_shape.begin(), info.input_shape.end());
    seed_batch();
    input_ = torch::randn(shape, torch::TensorOptions().device(dev));
    labels_ = torch::randint(0, info.num_classes, {o.batch}, torch::TensorOptions().dtype(torch::kLong).device(dev));
    if (o.layout == "nhwc") {
      detail::to_channels_last(*model_.ptr());
      input_ = input_.contiguous(at::MemoryFormat::ChannelsLast);
    }
    finish_setup(*model_.ptr(), models::model_flops(model_, info.input_shape, o.batch),
                 models::parameter_count(*model_.ptr()), 0, {&input_});
  }

 protected:
  torch::Tensor forward() override { return model_.forward(input_); }
  torch::Tensor loss(const torch::Tensor& output) override {
    return torch::nn::functional::cross_entropy(output, labels_);
  }

 private:
  torch::nn::AnyModule model_;
  torch::Tensor input_, labels_;
};

}  // namespace

std::unique_ptr<Workload> make_cnn_workload(const models::ModelInfo& info, const WorkloadOptions& options) {
  return std::make_unique<CnnWorkload>(info, options);
}

}  // namespace trainbench
