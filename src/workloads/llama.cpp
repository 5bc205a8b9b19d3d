// Llama-architecture decoder pre-training from scratch (models/llama.h): a named size or any Hugging Face
// config.json of a Llama, Mistral or Qwen 2 model (`--set config=PATH`), on synthetic tokens or a token
// file (--data), next-token cross-entropy over every position. Tokens/s, MFU and HFU by the formula in
// workloads/decoder.h (docs/methodology.md); `--set checkpoint=1` recomputes each block in backward.
// `layers` and `vocab` shrink a size (a CPU suite trains a few blocks of a real shape).
#include <torch/torch.h>

#include <stdexcept>

#include "models/attention.h"
#include "models/llama.h"
#include "cases/decoder_info.h"
#include "workloads/decoder.h"
#include "workloads/registry.h"

namespace trainbench {
namespace {

class LlamaWorkload final : public detail::DecoderLmWorkload {
 public:
  explicit LlamaWorkload(const WorkloadOptions& o) : DecoderLmWorkload(o) {
    const models::LlamaConfig config = llama_config_of(o.params);
    const models::AttentionKernel kernel = models::attention_kernel_from(param_str(o.params, "attention"));
    models::select_sdpa_backends(kernel);
    const int64_t seq = param_int(o.params, "seq");
    const bool checkpoint = param_int(o.params, "checkpoint") == 1;
    model_ = models::Llama(config, kernel);
    model_->to(torch_device(o.device));
    seed_batch();
    first_batch(seq, config.vocab);
    const StepFlops flops = count_batch_flops([this](const torch::Tensor& x) { return model_->forward(x); });
    model_->checkpoint_blocks = checkpoint;
    set_model_flops(
        seq,
        {static_cast<double>(model_->mfu_parameter_count()), static_cast<double>(model_->block_parameter_count()),
         static_cast<double>(config.layers), static_cast<double>(config.heads * config.head_dim)},
        checkpoint);
    finish_setup(*model_, flops, model_->parameter_count(), seq);
  }

 private:
  torch::Tensor forward() override { return model_->forward(input_); }

  models::Llama model_{nullptr};
};

}  // namespace

std::unique_ptr<Workload> make_llama_workload(const WorkloadOptions& o) { return std::make_unique<LlamaWorkload>(o); }

}  // namespace trainbench
