// The biLSTM sequence classifier of models/bilstm.h on synthetic token ids and labels, cross-entropy loss.
// Throughput is in sequences; tokens/s is that times params.seq.
#include <torch/torch.h>

#include "core/cpu_bf16.h"
#include "core/flops.h"
#include "data/token_source.h"
#include "models/bilstm.h"
#include "models/registry.h"
#include "workloads/registry.h"
#include "workloads/training.h"

namespace trainbench {
namespace {

class BiLSTMWorkload final : public detail::LossWorkload {
 public:
  explicit BiLSTMWorkload(const WorkloadOptions& o) : LossWorkload(o, "sequences/s") {
    // Said before anything is built, from what LibTorch and the CPU report (core/cpu_bf16.h): the case
    // is an error row with the reason, not oneDNN's "could not create a primitive descriptor".
    if (o.precision.autocast() && o.precision.type == "bf16" && !o.device.is_gpu()) {
      if (const std::string why = cpu_bf16_lstm_problem(); !why.empty()) throw std::runtime_error(why);
    }
    const torch::Device dev = torch_device(o.device);
    const auto options = models::BiLSTMOptions()
                             .vocab(param_int(o.params, "vocab"))
                             .embed(param_int(o.params, "embed"))
                             .hidden(param_int(o.params, "hidden"))
                             .layers(param_int(o.params, "layers"))
                             .classes(param_int(o.params, "classes"));
    const int64_t seq = param_int(o.params, "seq");
    model_ = models::BiLSTM(options);
    model_->to(dev);
    const auto ids = torch::TensorOptions().dtype(torch::kLong).device(dev);
    seed_batch();
    if (o.synthetic_data()) {
      tokens_ = torch::randint(0, options.vocab(), {o.batch, seq}, ids);
      labels_ = torch::randint(0, options.classes(), {o.batch}, ids);
    } else {
      // --data FILE: windows of the token file, each labelled from its own tokens (data/token_source.h).
      start_token_loader(data::TokenTarget::classify, seq, options.vocab(), options.classes());
    }
    // By formula: aten::lstm hides its GEMMs from core/flops.h (see models/bilstm.h).
    finish_setup(*model_, models::bilstm_step_flops(options, o.batch, seq), models::parameter_count(*model_), seq);
  }

 private:
  void take_batch(std::vector<torch::Tensor>& t) override {
    tokens_ = t[0];
    labels_ = t[1];
  }
  torch::Tensor forward() override { return model_->forward(tokens_); }
  torch::Tensor loss(const torch::Tensor& logits) override {
    return torch::nn::functional::cross_entropy(logits, labels_);
  }

  models::BiLSTM model_{nullptr};
  torch::Tensor tokens_, labels_;
};

}  // namespace

std::unique_ptr<Workload> make_bilstm_workload(const WorkloadOptions& o) { return std::make_unique<BiLSTMWorkload>(o); }

}  // namespace trainbench
