// GPT-2 pre-training from scratch (models/gpt.h) on synthetic tokens or a token file (--data): next-token cross-entropy
// over every position, as nanoGPT and llm.c train and benchmark it (input = seq tokens, targets = the same sequence
// shifted by one). Dropout 0 by default (what both benchmark); `--set dropout=0.1` is GPT-2's.
// Reports tokens/s, and MFU from model FLOPs by the PaLM formula (docs/methodology.md); with
// `--set checkpoint=1` each block's activations are recomputed in backward (HFU counts that forward too).
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

#include "cases/decoder_info.h"
#include "models/attention.h"
#include "models/gpt.h"
#include "workloads/registry.h"
#include "workloads/decoder.h"

namespace trainbench {
namespace {

// The model's options: the shape from the parameters (cases/decoder_info.h) and the attention kernel.
models::GptOptions gpt_options_of(const Params& p) {
  const GptShape s = gpt_shape_of(p);
  return models::GptOptions()
      .vocab(s.vocab)
      .max_pos(s.max_pos)
      .layers(s.layers)
      .hidden(s.hidden)
      .heads(s.heads)
      .dropout(s.dropout)
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
    model_->to(torch_device(o.device));
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

std::unique_ptr<Workload> make_gpt_workload(const WorkloadOptions& o) { return std::make_unique<GptWorkload>(o); }

}  // namespace trainbench
