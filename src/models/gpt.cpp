#include "models/gpt.h"
#include "models/layers.h"

#include <cmath>
#include <stdexcept>

#include "models/bert.h"  // unique_parameter_count
#include "models/checkpoint.h"

namespace trainbench::models {
namespace {

torch::nn::LayerNorm layer_norm_of(const GptOptions& o) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.hidden()}).eps(o.layer_norm_eps()));
}

// Hugging Face's GPT2PreTrainedModel._init_weights: linear and embedding weights N(0, 0.02), biases 0,
// LayerNorm 1 and 0; then every residual projection (c_proj) N(0, 0.02 / sqrt(2 * layers)), GPT-2's
// scaling for the residual path's depth.
void init_gpt_weights(torch::nn::Module& module, int64_t layers) {
  init_bert_weights(module);
  torch::NoGradGuard no_grad;
  for (auto& p : module.named_parameters(/*recurse=*/true)) {
    const std::string& name = p.key();
    if (name.size() >= 13 && name.compare(name.size() - 13, 13, "c_proj.weight") == 0) {
      torch::nn::init::normal_(p.value(), 0.0, 0.02 / std::sqrt(2.0 * static_cast<double>(layers)));
    }
  }
}

}  // namespace

GptAttentionImpl::GptAttentionImpl(const GptOptions& o) : heads(o.heads()), kernel(o.attention()) {
  if (o.heads() < 1 || o.hidden() % o.heads() != 0) {
    throw std::invalid_argument("gpt: heads (" + std::to_string(o.heads()) + ") must divide hidden (" +
                                std::to_string(o.hidden()) + ")");
  }
  c_attn = register_module("c_attn", torch::nn::Linear(o.hidden(), 3 * o.hidden()));
  c_proj = register_module("c_proj", torch::nn::Linear(o.hidden(), o.hidden()));
  attn_dropout = register_module("attn_dropout", torch::nn::Dropout(o.dropout()));
  resid_dropout = register_module("resid_dropout", torch::nn::Dropout(o.dropout()));
}

torch::Tensor GptAttentionImpl::forward(const torch::Tensor& x) {
  const int64_t n = x.size(0), t = x.size(1), h = x.size(2), d = h / heads;
  const auto qkv = linear(c_attn, x).split(h, /*dim=*/2);
  auto split = [&](const torch::Tensor& y) { return y.view({n, t, heads, d}).transpose(1, 2); };  // [N, heads, T, d]
  const auto context =
      scaled_dot_product(split(qkv[0]), split(qkv[1]), split(qkv[2]), /*causal=*/true, attn_dropout, kernel);
  return resid_dropout->forward(linear(c_proj, context.transpose(1, 2).reshape({n, t, h})));
}

GptBlockImpl::GptBlockImpl(const GptOptions& o) {
  ln_1 = register_module("ln_1", layer_norm_of(o));
  attn = register_module("attn", GptAttention(o));
  ln_2 = register_module("ln_2", layer_norm_of(o));
  c_fc = register_module("c_fc", torch::nn::Linear(o.hidden(), 4 * o.hidden()));
  c_proj = register_module("c_proj", torch::nn::Linear(4 * o.hidden(), o.hidden()));
  mlp_dropout = register_module("mlp_dropout", torch::nn::Dropout(o.dropout()));
}

torch::Tensor GptBlockImpl::forward(const torch::Tensor& x) {
  // Under autocast the branches come back in bf16/fp16 and the residual sum in fp32, so each
  // LayerNorm sees its own dtype (LibTorch 1.13's CPU LayerNorm takes no mixed dtypes).
  auto y = x + attn->forward(ln_1->forward(x));
  return y + mlp_dropout->forward(linear(c_proj, torch::gelu(linear(c_fc, ln_2->forward(y)), "tanh")));
}

GptImpl::GptImpl(const GptOptions& o) : options(o) {
  wte = register_module("wte", torch::nn::Embedding(o.vocab(), o.hidden()));
  wpe = register_module("wpe", torch::nn::Embedding(o.max_pos(), o.hidden()));
  drop = register_module("drop", torch::nn::Dropout(o.dropout()));
  h = register_module("h", torch::nn::ModuleList());
  for (int64_t i = 0; i < o.layers(); ++i) h->push_back(GptBlock(o));
  ln_f = register_module("ln_f", layer_norm_of(o));
  init_gpt_weights(*this, o.layers());
}

torch::Tensor GptImpl::forward(const torch::Tensor& input_ids) {
  const int64_t t = input_ids.size(1);
  if (t > options.max_pos()) {
    throw std::invalid_argument("gpt: sequence of " + std::to_string(t) + " tokens exceeds max_pos " +
                                std::to_string(options.max_pos()));
  }
  const auto positions = torch::arange(t, input_ids.options());
  auto x = drop->forward(wte->forward(input_ids) + wpe->forward(positions).unsqueeze(0));
  const bool recompute = checkpoint_blocks && is_training();
  for (const auto& m : *h) {
    const auto block = std::dynamic_pointer_cast<GptBlockImpl>(m);
    x = recompute ? checkpoint([block](const torch::Tensor& in) { return block->forward(in); }, x) : block->forward(x);
  }
  // Under autocast the final norm's input is the fp32 residual stream; the head is tied to wte.
  return torch::linear(ln_f->forward(x), wte->weight);
}

int64_t GptImpl::parameter_count() const { return unique_parameter_count(*this); }
int64_t GptImpl::mfu_parameter_count() const { return parameter_count() - wpe->weight.numel(); }
int64_t GptImpl::block_parameter_count() const { return unique_parameter_count(*h); }

}  // namespace trainbench::models
