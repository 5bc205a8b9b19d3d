#include "models/llama.h"

#include <cmath>
#include <stdexcept>

#include "models/bert.h"  // init_bert_weights, unique_parameter_count
#include "models/checkpoint.h"
#include "models/layers.h"

namespace trainbench::models {
namespace {

torch::nn::Linear linear_of(int64_t in, int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

// Each head's halves rotated together: [x1, x2] -> [-x2, x1] (Hugging Face's rotate_half).
torch::Tensor rotate_half(const torch::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

torch::Tensor apply_rotary(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  return x * cos + rotate_half(x) * sin;
}

// [N, kv, T, d] -> [N, kv * groups, T, d]: query head h reads key/value head h / groups (Hugging Face's
// repeat_kv).
torch::Tensor repeat_kv(const torch::Tensor& x, int64_t groups) {
  if (groups == 1) return x;
  const int64_t n = x.size(0), kv = x.size(1), t = x.size(2), d = x.size(3);
  return x.unsqueeze(2).expand({n, kv, groups, t, d}).reshape({n, kv * groups, t, d});
}

}  // namespace

RmsNormImpl::RmsNormImpl(int64_t width, double eps_) : eps(eps_) {
  weight = register_parameter("weight", torch::ones({width}));
}

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x) {
  const auto x32 = x.to(torch::kFloat);
  const auto variance = x32.pow(2).mean(-1, /*keepdim=*/true);
  return weight * (x32 * torch::rsqrt(variance + eps)).to(x.scalar_type());
}

std::vector<float> rope_inverse_frequencies(const LlamaConfig& c) {
  const int64_t pairs = c.head_dim / 2;
  std::vector<float> out(static_cast<size_t>(pairs));
  const double low_wavelen = static_cast<double>(c.rope_original_max_pos) / c.rope_low_freq_factor;
  const double high_wavelen = static_cast<double>(c.rope_original_max_pos) / c.rope_high_freq_factor;
  for (int64_t i = 0; i < pairs; ++i) {
    double f = 1.0 / std::pow(c.rope_theta, static_cast<double>(2 * i) / static_cast<double>(c.head_dim));
    if (c.rope_scaling == RopeScaling::linear) {
      f /= c.rope_factor;
    } else if (c.rope_scaling == RopeScaling::llama3) {
      // Hugging Face's _compute_llama3_parameters: wavelengths longer than the original context over
      // low_freq_factor are slowed by the factor, shorter than it over high_freq_factor kept, and the ones
      // between blended by where they sit.
      const double wavelen = 2.0 * M_PI / f;
      if (wavelen > low_wavelen) {
        f /= c.rope_factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth = (static_cast<double>(c.rope_original_max_pos) / wavelen - c.rope_low_freq_factor) /
                              (c.rope_high_freq_factor - c.rope_low_freq_factor);
        f = (1.0 - smooth) * f / c.rope_factor + smooth * f;
      }
    }
    out[static_cast<size_t>(i)] = static_cast<float>(f);
  }
  return out;
}

LlamaAttentionImpl::LlamaAttentionImpl(const LlamaConfig& c, AttentionKernel kernel_)
    : heads(c.heads), kv_heads(c.kv_heads), head_dim(c.head_dim), kernel(kernel_) {
  q_proj = register_module("q_proj", linear_of(c.hidden, c.heads * c.head_dim, c.qkv_bias));
  k_proj = register_module("k_proj", linear_of(c.hidden, c.kv_heads * c.head_dim, c.qkv_bias));
  v_proj = register_module("v_proj", linear_of(c.hidden, c.kv_heads * c.head_dim, c.qkv_bias));
  o_proj = register_module("o_proj", linear_of(c.heads * c.head_dim, c.hidden, c.o_bias));
  attn_dropout = register_module("attn_dropout", torch::nn::Dropout(c.attention_dropout));
}

torch::Tensor LlamaAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const int64_t n = x.size(0), t = x.size(1);
  auto split = [&](const torch::Tensor& y, int64_t h) { return y.view({n, t, h, head_dim}).transpose(1, 2); };
  const auto q = apply_rotary(split(linear(q_proj, x), heads), cos, sin);
  const auto k = apply_rotary(split(linear(k_proj, x), kv_heads), cos, sin);
  const auto v = split(linear(v_proj, x), kv_heads);
  const int64_t groups = heads / kv_heads;
  const auto context =
      scaled_dot_product(q, repeat_kv(k, groups), repeat_kv(v, groups), /*causal=*/true, attn_dropout, kernel);
  return linear(o_proj, context.transpose(1, 2).reshape({n, t, heads * head_dim}));
}

LlamaMlpImpl::LlamaMlpImpl(const LlamaConfig& c) {
  gate_proj = register_module("gate_proj", linear_of(c.hidden, c.intermediate, c.mlp_bias));
  up_proj = register_module("up_proj", linear_of(c.hidden, c.intermediate, c.mlp_bias));
  down_proj = register_module("down_proj", linear_of(c.intermediate, c.hidden, c.mlp_bias));
}

torch::Tensor LlamaMlpImpl::forward(const torch::Tensor& x) {
  return linear(down_proj, torch::silu(linear(gate_proj, x)) * linear(up_proj, x));
}

LlamaBlockImpl::LlamaBlockImpl(const LlamaConfig& c, AttentionKernel kernel) {
  self_attn = register_module("self_attn", LlamaAttention(c, kernel));
  mlp = register_module("mlp", LlamaMlp(c));
  input_layernorm = register_module("input_layernorm", RmsNorm(c.hidden, c.rms_norm_eps));
  post_attention_layernorm = register_module("post_attention_layernorm", RmsNorm(c.hidden, c.rms_norm_eps));
}

torch::Tensor LlamaBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  // Under autocast the branches come back in 16 bits and each residual sum in fp32.
  const auto y = x + self_attn->forward(input_layernorm->forward(x), cos, sin);
  return y + mlp->forward(post_attention_layernorm->forward(y));
}

LlamaImpl::LlamaImpl(const LlamaConfig& c, AttentionKernel kernel) : config(c) {
  check_llama_config(c, "llama");
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(c.vocab, c.hidden));
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.layers; ++i) layers->push_back(LlamaBlock(c, kernel));
  norm = register_module("norm", RmsNorm(c.hidden, c.rms_norm_eps));
  if (!c.tie_embeddings) lm_head = register_module("lm_head", linear_of(c.hidden, c.vocab, false));
  init_bert_weights(*this);  // linear and embedding weights N(0, 0.02), biases 0; RMSNorm weights are 1
}

std::pair<torch::Tensor, torch::Tensor> LlamaImpl::rotary(int64_t t, const torch::Device& device,
                                                          torch::ScalarType dtype) {
  if (!inv_freq_.defined() || inv_freq_.device() != device) {
    const std::vector<float> f = rope_inverse_frequencies(config);
    inv_freq_ = torch::tensor(f, torch::kFloat).to(device);
  }
  const auto positions = torch::arange(t, torch::TensorOptions(torch::kFloat).device(device));
  const auto freqs = positions.unsqueeze(1) * inv_freq_.unsqueeze(0);  // [T, head_dim / 2]
  const auto angles = torch::cat({freqs, freqs}, -1);                  // the halves share a frequency
  return {angles.cos().to(dtype), angles.sin().to(dtype)};
}

torch::Tensor LlamaImpl::forward(const torch::Tensor& input_ids) {
  auto x = embed_tokens->forward(input_ids);
  // cos and sin in the embedding's type, as Hugging Face's LlamaModel passes them: under autocast fp32, so
  // q and k leave the rotation in fp32 and the attention casts them back.
  const torch::ScalarType dtype = x.scalar_type();
  const auto [cos, sin] = rotary(input_ids.size(1), x.device(), dtype);
  const bool recompute = checkpoint_blocks && is_training();
  for (const auto& m : *layers) {
    const auto block = std::dynamic_pointer_cast<LlamaBlockImpl>(m);
    const torch::Tensor c = cos, s = sin;
    x = recompute ? checkpoint([block, c, s](const torch::Tensor& in) { return block->forward(in, c, s); }, x)
                  : block->forward(x, cos, sin);
  }
  const auto h = norm->forward(x);
  return config.tie_embeddings ? torch::linear(h, embed_tokens->weight) : linear(lm_head, h);
}

int64_t LlamaImpl::parameter_count() const { return unique_parameter_count(*this); }
int64_t LlamaImpl::mfu_parameter_count() const {
  return config.tie_embeddings ? parameter_count() : parameter_count() - embed_tokens->weight.numel();
}
int64_t LlamaImpl::block_parameter_count() const { return unique_parameter_count(*layers); }

}  // namespace trainbench::models
