// GPT-2 pre-training from scratch (models/gpt.h) on synthetic tokens or a token file (--data): next-token cross-entropy
// over every position, as nanoGPT and llm.c train and benchmark it (input = seq tokens, targets = the same sequence
// shifted by one). Dropout 0 by default (what both benchmark); `--set dropout=0.1` is GPT-2's.
// Reports tokens/s, and MFU from model FLOPs by the PaLM formula (docs/methodology.md); with
// `--set checkpoint=1` each block's activations are recomputed in backward (HFU counts that forward too).
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

#include "core/value_rules.h"
#include "models/attention.h"
#include "models/gpt.h"
#include "workloads/study_models.h"
#include "workloads/decoder.h"

namespace trainbench {
namespace {

constexpr NumberRule kDropout{0.0, 0.9, false, false};

// The model's options from the workload parameters: size gives layers and hidden unless they are given
// (non-zero); heads default to hidden / 64, as in every GPT-2 size.
models::GptOptions gpt_options_of(const Params& p) {
  const models::GptSize size = models::gpt_size(param_str(p, "size"));
  const int64_t layers = param_int(p, "layers") > 0 ? param_int(p, "layers") : size.layers;
  const int64_t hidden = param_int(p, "hidden") > 0 ? param_int(p, "hidden") : size.hidden;
  const int64_t heads = param_int(p, "heads") > 0 ? param_int(p, "heads") : std::max<int64_t>(1, hidden / 64);
  double dropout = 0.0;
  (void)number_text_problem(param_str(p, "dropout"), kDropout, &dropout);
  return models::GptOptions()
      .vocab(param_int(p, "vocab"))
      .max_pos(param_int(p, "max_pos"))
      .layers(layers)
      .hidden(hidden)
      .heads(heads)
      .dropout(dropout)
      .attention(models::attention_kernel_from(param_str(p, "attention")));
}

class GptWorkload final : public detail::DecoderLmWorkload {
 public:
  explicit GptWorkload(const WorkloadOptions& o) : DecoderLmWorkload(o) {
    const models::GptOptions options = gpt_options_of(o.params);
    models::select_sdpa_backends(options.attention());
    const int64_t seq = param_int(o.params, "seq");
    const bool checkpoint = param_int(o.params, "checkpoint") == 1;
    model_ = models::Gpt(options);
    model_->to(o.device.torch_device());
    seed_batch();
    first_batch(seq, options.vocab());
    const StepFlops flops = count_batch_flops([this](const torch::Tensor& x) { return model_->forward(x); });
    model_->checkpoint_blocks = checkpoint;
    // N excludes the position embedding and includes the tied LM head (the token embedding's product runs
    // at every position); the attention width is the hidden width.
    set_model_flops(
        seq,
        {static_cast<double>(model_->mfu_parameter_count()), static_cast<double>(model_->block_parameter_count()),
         static_cast<double>(options.layers()), static_cast<double>(options.hidden())},
        checkpoint);
    finish_setup(*model_, flops, model_->parameter_count(), seq);
  }

 private:
  torch::Tensor forward() override { return model_->forward(input_); }

  models::Gpt model_{nullptr};
};

}  // namespace

WorkloadInfo gpt_workload_info() {
  WorkloadInfo w;
  w.name = "gpt";
  w.family = "transformer";
  w.unit = "sequences/s";
  w.input = "seq 1024";
  w.default_batch = 8;
  w.data_kind = data::DataKind::tokens;
  w.description =
      "GPT-2 pre-training from scratch, Hugging Face's GPT2LMHeadModel (small 124.4M, medium 354.8M, large 774.0M, "
      "xl 1557.6M params): next-token loss; tokens/s and MFU";
  w.params = {
      {"size", "small", "GPT-2 size: small (L12 H768), medium (L24 H1024), large (L36 H1280), xl (L48 H1600)",
       one_of({"small", "medium", "large", "xl"})},
      {"layers", "0", "decoder blocks, 1 to 256; 0: from size", int_in_range(0, 256)},
      {"hidden", "0", "hidden width, 1 to 65536 (a multiple of heads), MLP 4x; 0: from size", int_in_range(0, 65536)},
      {"heads", "0", "attention heads, 1 to 1024 (must divide hidden); 0: hidden / 64", int_in_range(0, 1024)},
      {"vocab", "50257", "vocabulary size, 2 to 10000000", int_in_range(2, 10'000'000)},
      {"max_pos", "1024", "position-embedding length, 1 to 100000 (at least seq)", int_in_range(1, 100'000)},
      {"seq", "1024", "tokens per sequence, 1 to 100000 (at most max_pos)", int_in_range(1, 100'000)},
      {"dropout", "0", "dropout on embeddings, attention probabilities and residuals, 0 to 0.9 (GPT-2: 0.1)",
       [](const std::string& v) {
         const std::string why = number_text_problem(v, kDropout);
         if (!why.empty()) throw std::invalid_argument(why);
       }},
      {"checkpoint", "0", "1: recompute each block's activations in backward (activation checkpointing)",
       one_of({"0", "1"})},
      {"attention", models::default_attention_kernel(), models::attention_param_help(),
       [](const std::string& v) { (void)models::attention_kernel_from(v); }, /*kernel_choice=*/true},
  };
  w.check_together = [](const Params& p) {
    const models::GptOptions o = gpt_options_of(p);
    const int64_t seq = param_int(p, "seq");
    if (seq > o.max_pos()) {
      throw std::invalid_argument("gpt: seq " + std::to_string(seq) + " exceeds max_pos " +
                                  std::to_string(o.max_pos()));
    }
    if (o.hidden() % o.heads() != 0) {
      throw std::invalid_argument("gpt: heads " + std::to_string(o.heads()) + " does not divide hidden " +
                                  std::to_string(o.hidden()));
    }
  };
  w.depth = [](const Params& p) { return gpt_options_of(p).layers(); };
  w.make = [](const WorkloadOptions& o) -> std::unique_ptr<Workload> { return std::make_unique<GptWorkload>(o); };
  return w;
}

}  // namespace trainbench
