// Llama-architecture decoder pre-training from scratch (models/llama.h): a named size or any Hugging Face
// config.json of a Llama, Mistral or Qwen 2 model (`--set config=PATH`), on synthetic tokens or a token
// file (--data), next-token cross-entropy over every position. Tokens/s, MFU and HFU by the formula in
// workloads/decoder.h (docs/methodology.md); `--set checkpoint=1` recomputes each block in backward.
// `layers` and `vocab` shrink a size (a CPU suite trains a few blocks of a real shape).
#include <torch/torch.h>

#include <stdexcept>

#include "models/attention.h"
#include "models/llama.h"
#include "models/llama_config.h"
#include "workloads/decoder.h"
#include "workloads/study_models.h"

namespace trainbench {
namespace {

constexpr const char* kDefaultSize = "llama-3.2-1b";

// The shape a case trains: the named size or the config file, then the overrides; checked by the one rule
// (models::check_llama_config), with the sequence against a sliding window.
models::LlamaConfig llama_config_of(const Params& p) {
  const std::string& file = param_str(p, "config");
  if (!file.empty() && param_str(p, "size") != kDefaultSize) {
    throw std::invalid_argument("llama: give size= or config=, not both");
  }
  models::LlamaConfig c = file.empty() ? models::llama_size(param_str(p, "size")) : models::read_llama_config(file);
  if (param_int(p, "layers") > 0) c.layers = param_int(p, "layers");
  if (param_int(p, "vocab") > 0) c.vocab = param_int(p, "vocab");
  models::check_llama_config(c, "llama " + c.source);
  const int64_t seq = param_int(p, "seq");
  if (c.sliding_window > 0 && seq > c.sliding_window) {
    throw std::invalid_argument("llama " + c.source + ": seq " + std::to_string(seq) + " exceeds its sliding_window " +
                                std::to_string(c.sliding_window) +
                                " (sliding-window attention is not implemented; at most the window it is full "
                                "causal attention)");
  }
  return c;
}

class LlamaWorkload final : public detail::DecoderLmWorkload {
 public:
  explicit LlamaWorkload(const WorkloadOptions& o) : DecoderLmWorkload(o) {
    const models::LlamaConfig config = llama_config_of(o.params);
    const models::AttentionKernel kernel = models::attention_kernel_from(param_str(o.params, "attention"));
    models::select_sdpa_backends(kernel);
    const int64_t seq = param_int(o.params, "seq");
    const bool checkpoint = param_int(o.params, "checkpoint") == 1;
    model_ = models::Llama(config, kernel);
    model_->to(o.device.torch_device());
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

std::string size_help() {
  std::string names;
  for (const auto& n : models::llama_size_names()) names += (names.empty() ? "" : ", ") + n;
  return std::string("a published shape: ") + names + " (llama-tiny: a test size)";
}

}  // namespace

WorkloadInfo llama_workload_info() {
  WorkloadInfo w;
  w.name = "llama";
  w.family = "transformer";
  w.unit = "sequences/s";
  w.input = "seq 2048";
  w.default_batch = 4;
  w.data_kind = data::DataKind::tokens;
  w.description =
      "Llama-architecture decoder pre-training from scratch (RMSNorm, RoPE, SwiGLU, grouped-query attention): "
      "Llama 3.2 1B/3B, 3.1 8B, Mistral 7B, Qwen2.5 0.5B/7B, SmolLM2 135M, or a Hugging Face config.json; "
      "next-token loss; tokens/s and MFU";
  w.params = {
      {"size", kDefaultSize, size_help(), one_of(models::llama_size_names())},
      {"config", "", "a Hugging Face config.json (model_type llama, mistral or qwen2) instead of size",
       [](const std::string& v) {
         if (!v.empty()) (void)models::read_llama_config(v);
       }},
      {"layers", "0", "decoder blocks, 1 to 1024; 0: the size's or config's", int_in_range(0, 1024)},
      {"vocab", "0", "vocabulary size, 2 to 10000000; 0: the size's or config's", int_in_range(0, 10'000'000)},
      {"seq", "2048", "tokens per sequence, 1 to 1000000", int_in_range(1, 1'000'000)},
      {"checkpoint", "0", "1: recompute each block's activations in backward (activation checkpointing)",
       one_of({"0", "1"})},
      {"attention", models::default_attention_kernel(), models::attention_param_help(),
       [](const std::string& v) { (void)models::attention_kernel_from(v); }, /*kernel_choice=*/true},
  };
  w.check_together = [](const Params& p) { (void)llama_config_of(p); };
  w.depth = [](const Params& p) { return llama_config_of(p).layers; };
  w.make = [](const WorkloadOptions& o) -> std::unique_ptr<Workload> { return std::make_unique<LlamaWorkload>(o); };
  return w;
}

}  // namespace trainbench
