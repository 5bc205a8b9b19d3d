// BERT-Base-shaped masked-LM pre-training from scratch (models/bert.h) on synthetic data: random token
// ids, segment ids all 0, and a random label at every position (no masking: cross-entropy over all
// positions, which costs what the full decoder costs).
#include <torch/torch.h>

#include <stdexcept>

#include "core/flops.h"
#include "models/bert.h"
#include "workloads/study_models.h"
#include "workloads/training.h"

namespace trainbench {
namespace {

class BertWorkload final : public detail::LossWorkload {
 public:
  explicit BertWorkload(const WorkloadOptions& o) : LossWorkload(o, "sequences/s") {
    const torch::Device dev = o.device.torch_device();
    const auto options = models::BertOptions()
                             .vocab(param_int(o.params, "vocab"))
                             .hidden(param_int(o.params, "hidden"))
                             .layers(param_int(o.params, "layers"))
                             .heads(param_int(o.params, "heads"))
                             .max_pos(param_int(o.params, "max_pos"));
    const int64_t seq = param_int(o.params, "seq");
    model_ = models::BertMaskedLM(options);
    model_->to(dev);
    const auto ids = torch::TensorOptions().dtype(torch::kLong).device(dev);
    seed_batch();
    tokens_ = torch::randint(0, options.vocab(), {o.batch, seq}, ids);
    segments_ = torch::zeros({o.batch, seq}, ids);
    labels_ = torch::randint(0, options.vocab(), {o.batch * seq}, ids);
    // Every counted product (linears, and attention per sequence) is linear in the batch: one
    // sequence's count times the batch is exact.
    double one = 0.0;
    {
      torch::NoGradGuard no_grad;
      const auto t = tokens_.narrow(0, 0, 1);
      const auto s = segments_.narrow(0, 0, 1);
      one = count_flops([&] { model_->forward(t, s); });
    }
    finish_setup(*model_, one * static_cast<double>(o.batch), model_->parameter_count(), seq);
  }

 private:
  torch::Tensor forward() override { return model_->forward(tokens_, segments_); }
  torch::Tensor loss(const torch::Tensor& logits) override {
    return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), labels_);
  }

  models::BertMaskedLM model_{nullptr};
  torch::Tensor tokens_, segments_, labels_;
};

}  // namespace

WorkloadInfo bert_workload_info() {
  WorkloadInfo w;
  w.name = "bert";
  w.family = "transformer";
  w.unit = "sequences/s";
  w.input = "seq 200";
  w.default_batch = 32;
  w.description =
      "BERT-Base-shaped encoder + masked-LM head from scratch (110.1M params), MLM loss over all positions";
  w.params = {
      {"layers", "12", "encoder layers, 1 to 256", int_in_range(1, 256)},
      {"hidden", "768", "hidden width, 1 to 65536 (a multiple of heads); feed-forward is 4x", int_in_range(1, 65536)},
      {"heads", "12", "attention heads, 1 to 1024 (must divide hidden)", int_in_range(1, 1024)},
      {"vocab", "30522", "vocabulary size, 2 to 10000000", int_in_range(2, 10'000'000)},
      {"max_pos", "512", "position-embedding length, 1 to 100000 (at least seq)", int_in_range(1, 100'000)},
      {"seq", "200", "tokens per sequence, 1 to 100000 (at most max_pos)", int_in_range(1, 100'000)},
  };
  w.check_together = [](const Params& p) {
    const int64_t seq = param_int(p, "seq"), max_pos = param_int(p, "max_pos");
    if (seq > max_pos) {
      throw std::invalid_argument("bert: seq " + std::to_string(seq) + " exceeds max_pos " + std::to_string(max_pos));
    }
    const int64_t hidden = param_int(p, "hidden"), heads = param_int(p, "heads");
    if (hidden % heads != 0) {
      throw std::invalid_argument("bert: heads " + std::to_string(heads) + " does not divide hidden " +
                                  std::to_string(hidden));
    }
  };
  w.make = [](const WorkloadOptions& o) -> std::unique_ptr<Workload> { return std::make_unique<BertWorkload>(o); };
  return w;
}

}  // namespace trainbench
