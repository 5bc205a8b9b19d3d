// GPT-2 (Radford et al. 2019) as Hugging Face's GPT2LMHeadModel builds it: token and learned position
// embeddings, pre-LN decoder blocks (LayerNorm -> causal self-attention -> residual, LayerNorm -> MLP
// 4H with tanh-GELU -> residual), a final LayerNorm and an LM head tied to the token embedding (no bias).
// LayerNorm eps 1e-5; initialisation N(0, 0.02), the residual projections N(0, 0.02 / sqrt(2 L)).
// The default options give GPT-2 small (124,439,808 parameters).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "models/attention.h"

namespace trainbench::models {

struct GptOptions {
  TORCH_ARG(int64_t, vocab) = 50257;
  TORCH_ARG(int64_t, max_pos) = 1024;  // n_positions: the longest sequence
  TORCH_ARG(int64_t, hidden) = 768;
  TORCH_ARG(int64_t, layers) = 12;
  TORCH_ARG(int64_t, heads) = 12;    // must divide hidden
  TORCH_ARG(double, dropout) = 0.0;  // embedding, attention-probability and residual dropout
  TORCH_ARG(double, layer_norm_eps) = 1e-5;
  TORCH_ARG(AttentionKernel, attention) = AttentionKernel::math;
};

// Causal multi-head self-attention: one fused QKV projection (c_attn) and the output projection (c_proj).
struct GptAttentionImpl : torch::nn::Module {
  explicit GptAttentionImpl(const GptOptions& o);
  torch::Tensor forward(const torch::Tensor& x);  // [N, T, H] -> [N, T, H]

  int64_t heads;
  AttentionKernel kernel;
  torch::nn::Linear c_attn{nullptr}, c_proj{nullptr};
  torch::nn::Dropout attn_dropout{nullptr}, resid_dropout{nullptr};
};
TORCH_MODULE(GptAttention);

// One pre-LN decoder block.
struct GptBlockImpl : torch::nn::Module {
  explicit GptBlockImpl(const GptOptions& o);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  GptAttention attn{nullptr};
  torch::nn::Linear c_fc{nullptr}, c_proj{nullptr};  // the MLP: H -> 4H -> H
  torch::nn::Dropout mlp_dropout{nullptr};
};
TORCH_MODULE(GptBlock);

// GPT2LMHeadModel: [N, T] token ids -> [N, T, vocab] next-token logits.
struct GptImpl : torch::nn::Module {
  explicit GptImpl(const GptOptions& o = {});
  torch::Tensor forward(const torch::Tensor& input_ids);

  // Distinct parameter elements (the tied LM head counted once, as Hugging Face counts them).
  int64_t parameter_count() const;
  // The N of the MFU formula: every parameter but the position embedding (the token embedding counts as
  // the LM head's weight, whose product runs at every position).
  int64_t mfu_parameter_count() const;
  // The decoder blocks' parameters: what activation checkpointing recomputes.
  int64_t block_parameter_count() const;

  GptOptions options;
  // In training with grad mode, each block's activations are recomputed in backward (models/checkpoint.h).
  bool checkpoint_blocks = false;
  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  torch::nn::Dropout drop{nullptr};
  torch::nn::ModuleList h{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};
};
TORCH_MODULE(Gpt);

}  // namespace trainbench::models
