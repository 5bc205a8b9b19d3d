// BERT pre-training from scratch (models/bert.h) on synthetic data, as Hugging Face's classes train it.
// head=pretraining (default): BertForPreTraining, loss = masked-LM cross-entropy + next-sentence
// cross-entropy on the pooled first token. head=mlm: BertForMaskedLM, the masked-LM loss alone.
// Synthetic batch: random token ids; segment ids 0 for the first half of each sequence, 1 for the
// second (sentence A / B); a random next-sentence label per sequence. The masked-LM loss covers exactly
// round(15%) of the positions of each sequence (at least one), drawn without replacement, each with a
// random label, the ids left as they are (not Hugging Face's DataCollatorForLanguageModeling, whose
// Bernoulli(0.15) draw and 80/10/10 replacement the token-file path runs: data/token_source.h); the
// other positions carry the label -100 and are ignored. As in Hugging Face, the decoder computes logits at every
// position: the head's cost does not depend on how many positions the loss reads.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/flops.h"
#include "data/token_source.h"
#include "models/attention.h"
#include "models/bert.h"
#include "workloads/registry.h"
#include "workloads/training.h"

namespace trainbench {
namespace {

constexpr int64_t kIgnoreIndex = -100;  // Hugging Face's label for positions the MLM loss skips
constexpr double kMaskedShare = 0.15;

// Round(15%) of `seq` positions per sequence (at least 1) get a random label, the rest kIgnoreIndex.
torch::Tensor masked_lm_labels(int64_t batch, int64_t seq, int64_t vocab, const torch::TensorOptions& ids) {
  const int64_t masked = std::max<int64_t>(1, std::llround(kMaskedShare * static_cast<double>(seq)));
  const auto order = torch::rand({batch, seq}, ids.dtype(torch::kFloat)).argsort(/*dim=*/1, /*descending=*/false);
  const auto positions = order.narrow(1, 0, masked);
  auto labels = torch::full({batch, seq}, kIgnoreIndex, ids);
  labels.scatter_(1, positions, torch::randint(0, vocab, {batch, masked}, ids));
  return labels.reshape({-1});
}

class BertWorkload final : public detail::LossWorkload {
 public:
  explicit BertWorkload(const WorkloadOptions& o) : LossWorkload(o, "sequences/s") {
    const torch::Device dev = torch_device(o.device);
    const auto options = models::BertOptions()
                             .vocab(param_int(o.params, "vocab"))
                             .hidden(param_int(o.params, "hidden"))
                             .layers(param_int(o.params, "layers"))
                             .heads(param_int(o.params, "heads"))
                             .max_pos(param_int(o.params, "max_pos"))
                             .attention(models::attention_kernel_from(param_str(o.params, "attention")));
    models::select_sdpa_backends(options.attention());
    const int64_t seq = param_int(o.params, "seq");
    const std::string head = param_str(o.params, "head");
    pretraining_ = head == "pretraining";
    qa_ = head == "qa";
    torch::nn::Module* module = nullptr;
    int64_t parameters = 0;
    if (qa_) {
      if (!o.synthetic_data())
        throw std::invalid_argument(
            "bert: head qa trains on synthetic answer spans; --data gives a token file no spans");
      qa_model_ = models::BertForQuestionAnswering(options);
      module = qa_model_.get();
      parameters = qa_model_->parameter_count();
    } else if (pretraining_) {
      pretraining_model_ = models::BertForPreTraining(options);
      module = pretraining_model_.get();
      parameters = pretraining_model_->parameter_count();
    } else {
      mlm_model_ = models::BertMaskedLM(options);
      module = mlm_model_.get();
      parameters = mlm_model_->parameter_count();
    }
    module->to(dev);
    const auto ids = torch::TensorOptions().dtype(torch::kLong).device(dev);
    seed_batch();
    if (qa_) {
      // An answer span per sequence: a start position and an end at or after it.
      tokens_ = torch::randint(0, options.vocab(), {o.batch, seq}, ids);
      starts_ = torch::randint(0, seq, {o.batch}, ids);
      ends_ = torch::minimum(starts_ + torch::randint(0, 30, {o.batch}, ids), torch::full({o.batch}, seq - 1, ids));
    } else if (o.synthetic_data()) {
      tokens_ = torch::randint(0, options.vocab(), {o.batch, seq}, ids);
      labels_ = masked_lm_labels(o.batch, seq, options.vocab(), ids);
    } else {
      // --data FILE: windows of the token file, masked by the loader (data/token_source.h).
      start_token_loader(data::TokenTarget::masked_lm, seq, options.vocab());
    }
    segments_ = torch::zeros({o.batch, seq}, ids);
    segments_.narrow(1, seq / 2, seq - seq / 2).fill_(1);
    // A flat token file has no sentence pairs: the next-sentence labels stay synthetic with --data too.
    next_sentence_ = torch::randint(0, 2, {o.batch}, ids);
    // Every counted product (linears, and attention per sequence) is linear in the batch: one
    // sequence's count times the batch is exact.
    StepFlops one;
    {
      torch::AutoGradMode grad(true);   // the backward part follows which operands require a gradient
      models::MathAttentionScope math;  // the explicit products, whichever kernel the case runs
      const auto t = tokens_.narrow(0, 0, 1);
      const auto s = segments_.narrow(0, 0, 1);
      one = count_step_flops([&] { run(t, s); });
    }
    nsp_logits_ = torch::Tensor();
    finish_setup(*module, one.scaled(static_cast<double>(o.batch)), parameters, seq);
  }

 private:
  void take_batch(std::vector<torch::Tensor>& t) override {
    tokens_ = t[0];
    labels_ = t[1].reshape({-1});
  }
  // The MLM logits; the next-sentence logits (pretraining) wait in nsp_logits_ for loss().
  torch::Tensor run(const torch::Tensor& tokens, const torch::Tensor& segments) {
    if (qa_) return qa_model_->forward(tokens, segments);
    if (!pretraining_) return mlm_model_->forward(tokens, segments);
    auto [mlm, nsp] = pretraining_model_->forward(tokens, segments);
    nsp_logits_ = nsp;
    return mlm;
  }
  torch::Tensor forward() override { return run(tokens_, segments_); }
  torch::Tensor loss(const torch::Tensor& logits) override {
    namespace F = torch::nn::functional;
    if (qa_) {
      // SQuAD's loss: the mean of the start's and the end's cross-entropy over the positions.
      const auto start = logits.select(-1, 0), end = logits.select(-1, 1);
      return (F::cross_entropy(start, starts_) + F::cross_entropy(end, ends_)) / 2;
    }
    const auto ce = F::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex);
    auto l = F::cross_entropy(logits.reshape({-1, logits.size(-1)}), labels_, ce);
    if (pretraining_) {
      // In the MLM logits' type: fp32 under the pure precisions, as the step casts those.
      l = l + F::cross_entropy(nsp_logits_.to(logits.scalar_type()), next_sentence_);
      nsp_logits_ = torch::Tensor();
    }
    return l;
  }

  bool pretraining_ = true;
  bool qa_ = false;
  models::BertForPreTraining pretraining_model_{nullptr};
  models::BertForQuestionAnswering qa_model_{nullptr};
  torch::Tensor starts_, ends_;
  models::BertMaskedLM mlm_model_{nullptr};
  torch::Tensor tokens_, segments_, labels_, next_sentence_, nsp_logits_;
};

}  // namespace

std::unique_ptr<Workload> make_bert_workload(const WorkloadOptions& o) { return std::make_unique<BertWorkload>(o); }

}  // namespace trainbench
