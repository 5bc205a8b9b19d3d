// Image classification workloads: any model of the CNN zoo, cross-entropy on synthetic images.
#include <torch/torch.h>

#include "data/image_folder.h"
#include "data/image_source.h"
#include "models/registry.h"
#include "workloads/training.h"
#include "workloads/workload.h"

namespace trainbench {
namespace {

class CnnWorkload final : public detail::LossWorkload {
 public:
  CnnWorkload(const models::ModelInfo& info, const WorkloadOptions& o) : LossWorkload(o, "images/s") {
    const torch::Device dev = torch_device(o.device);
    model_ = info.make();
    model_.ptr()->to(dev);
    std::vector<int64_t> shape = {o.batch};
    shape.insert(shape.end(), info.input_shape.begin(), info.input_shape.end());
    if (o.layout == Layout::nhwc) detail::to_channels_last(*model_.ptr());
    if (o.synthetic_data()) {
      seed_batch();
      input_ = torch::randn(shape, torch::TensorOptions().device(dev));
      labels_ = torch::randint(0, info.num_classes, {o.batch}, torch::TensorOptions().dtype(torch::kLong).device(dev));
      if (o.layout == Layout::nhwc) input_ = input_.contiguous(at::MemoryFormat::ChannelsLast);
    } else {
      start_image_loader(info, o);
    }
    finish_setup(*model_.ptr(), models::model_flops(model_, info.input_shape, o.batch),
                 models::parameter_count(*model_.ptr()), 0, {&input_});
  }

 protected:
  void take_batch(std::vector<torch::Tensor>& t) override {
    input_ = t[0];
    labels_ = t[1];
  }
  torch::Tensor forward() override { return model_.forward(input_); }
  torch::Tensor loss(const torch::Tensor& output) override {
    return torch::nn::functional::cross_entropy(output, labels_);
  }

 private:
  // --data DIR: the ImageFolder's JPEGs, cropped to the model's input size, in its layout and (pure
  // precisions) its dtype.
  void start_image_loader(const models::ModelInfo& info, const WorkloadOptions& o) {
    data::ImageFolder folder = data::scan_image_folder(o.data);
    if (static_cast<int64_t>(folder.classes.size()) > info.num_classes) {
      throw std::invalid_argument("--data " + o.data + ": " + std::to_string(folder.classes.size()) +
                                  " classes, more than " + info.name + "'s " + std::to_string(info.num_classes));
    }
    data::ImageSourceOptions so;
    so.batch = o.batch;
    so.height = info.input_shape.at(1);
    so.width = info.input_shape.at(2);
    so.channels_last = o.layout == Layout::nhwc;
    so.dtype = detail::input_dtype(precision_);
    so.seed = static_cast<uint64_t>(o.data_seed >= 0 ? o.data_seed : 0);
    so.pin_memory = o.device.is_gpu();
    so.uint8 = o.data_transfer == "uint8";
    start_loader(std::make_shared<data::ImageFolderSource>(std::move(folder), so));
  }

  torch::nn::AnyModule model_;
  torch::Tensor input_, labels_;
};

}  // namespace

std::unique_ptr<Workload> make_cnn_workload(const models::ModelInfo& info, const WorkloadOptions& options) {
  return std::make_unique<CnnWorkload>(info, options);
}

}  // namespace trainbench
