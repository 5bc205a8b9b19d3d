// A Llama-architecture decoder (Touvron et al. 2023; Llama 3, Mistral, Qwen 2) as Hugging Face's
// LlamaForCausalLM builds it: token embedding; per block, pre-norm x + attention(RMSNorm(x)), then
// x + MLP(RMSNorm(x)); a final RMSNorm and the LM head (tied to the embedding or its own, no bias).
// Attention: q, k and v projections (grouped-query: kv_heads key/value heads, each shared by heads /
// kv_heads query heads), rotary position embeddings on q and k (each head's halves rotated together,
// theta and optional Llama 3.1 scaling), causal scaled dot-product attention, the o projection. MLP:
// down(silu(gate(x)) * up(x)) (SwiGLU). RMSNorm in fp32 whatever the input's type, as Hugging Face's.
// Biases only where the config asks (Qwen 2's q, k and v). Initialisation N(0, 0.02), biases 0, norms 1.
#pragma once
#include <torch/torch.h>

#include <cstdint>

#include "models/attention.h"
#include "cases/llama_config.h"

namespace trainbench::models {

// RMSNorm (Zhang and Sennrich 2019): x / sqrt(mean(x²) + eps) · weight, computed in fp32 and returned in
// the input's type before the weight multiplies it (Hugging Face's LlamaRMSNorm).
struct RmsNormImpl : torch::nn::Module {
  RmsNormImpl(int64_t width, double eps);
  torch::Tensor forward(const torch::Tensor& x);

  double eps;
  torch::Tensor weight;
};
TORCH_MODULE(RmsNorm);

// The inverse frequencies of the rotary embedding, one per pair of a head's dimensions (head_dim / 2):
// theta^(-2i / head_dim), scaled as the config says. fp32, whatever the model's type.
std::vector<float> rope_inverse_frequencies(const LlamaConfig& c);

struct LlamaAttentionImpl : torch::nn::Module {
  LlamaAttentionImpl(const LlamaConfig& c, AttentionKernel kernel);
  // x [N, T, hidden]; cos and sin [T, head_dim] -> [N, T, hidden].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

  int64_t heads, kv_heads, head_dim;
  AttentionKernel kernel;
  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  torch::nn::Dropout attn_dropout{nullptr};
};
TORCH_MODULE(LlamaAttention);

struct LlamaMlpImpl : torch::nn::Module {
  explicit LlamaMlpImpl(const LlamaConfig& c);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(LlamaMlp);

struct LlamaBlockImpl : torch::nn::Module {
  LlamaBlockImpl(const LlamaConfig& c, AttentionKernel kernel);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

  RmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  LlamaAttention self_attn{nullptr};
  LlamaMlp mlp{nullptr};
};
TORCH_MODULE(LlamaBlock);

// LlamaForCausalLM: [N, T] token ids -> [N, T, vocab] next-token logits. Parameter names are Hugging
// Face's without the "model." prefix (embed_tokens, layers.0.self_attn.q_proj.weight, norm, lm_head).
struct LlamaImpl : torch::nn::Module {
  LlamaImpl(const LlamaConfig& c, AttentionKernel kernel = AttentionKernel::math);
  torch::Tensor forward(const torch::Tensor& input_ids);
  // cos and sin [T, head_dim] for positions 0..T-1 on `device`, in `dtype` (Hugging Face's
  // LlamaRotaryEmbedding: computed in fp32, then cast).
  std::pair<torch::Tensor, torch::Tensor> rotary(int64_t t, const torch::Device& device, torch::ScalarType dtype);

  // Distinct parameter elements (a tied head counted once, as Hugging Face counts them).
  int64_t parameter_count() const;
  // The N of the MFU formula: every parameter whose product runs at every token, so all but an untied
  // model's input embedding (a lookup); a tied embedding counts as the LM head's weight.
  int64_t mfu_parameter_count() const;
  // The decoder blocks' parameters: what activation checkpointing recomputes.
  int64_t block_parameter_count() const;

  LlamaConfig config;
  bool checkpoint_blocks = false;  // in training with grad mode, each block is recomputed in backward
  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers{nullptr};
  RmsNorm norm{nullptr};
  torch::nn::Linear lm_head{nullptr};  // untied only

 private:
  torch::Tensor inv_freq_;  // fp32 on the model's device, made at the first forward (not a buffer: never cast)
};
TORCH_MODULE(Llama);

}  // namespace trainbench::models
