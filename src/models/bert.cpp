#include "models/bert.h"
#include "models/layers.h"

#include <cmath>
#include <stdexcept>
#include <unordered_set>

namespace trainbench::models {
namespace {

torch::nn::LayerNorm layer_norm_of(const BertOptions& o) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.hidden()}).eps(o.layer_norm_eps()));
}

}  // namespace

BertEmbeddingsImpl::BertEmbeddingsImpl(const BertOptions& o) {
  word_embeddings = register_module("word_embeddings", torch::nn::Embedding(o.vocab(), o.hidden()));
  position_embeddings = register_module("position_embeddings", torch::nn::Embedding(o.max_pos(), o.hidden()));
  token_type_embeddings = register_module("token_type_embeddings", torch::nn::Embedding(o.type_vocab(), o.hidden()));
  layer_norm = register_module("layer_norm", layer_norm_of(o));
  dropout = register_module("dropout", torch::nn::Dropout(o.dropout()));
}

torch::Tensor BertEmbeddingsImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids) {
  const auto positions = torch::arange(input_ids.size(1), input_ids.options());
  auto x = word_embeddings->forward(input_ids) + position_embeddings->forward(positions).unsqueeze(0) +
           token_type_embeddings->forward(token_type_ids);
  return dropout->forward(layer_norm->forward(x));
}

BertSelfAttentionImpl::BertSelfAttentionImpl(const BertOptions& o) : heads(o.heads()), kernel(o.attention()) {
  if (o.heads() < 1 || o.hidden() % o.heads() != 0) {
    throw std::invalid_argument("bert: heads (" + std::to_string(o.heads()) + ") must divide hidden (" +
                                std::to_string(o.hidden()) + ")");
  }
  query = register_module("query", torch::nn::Linear(o.hidden(), o.hidden()));
  key = register_module("key", torch::nn::Linear(o.hidden(), o.hidden()));
  value = register_module("value", torch::nn::Linear(o.hidden(), o.hidden()));
  output = register_module("output", torch::nn::Linear(o.hidden(), o.hidden()));
  dropout = register_module("dropout", torch::nn::Dropout(o.dropout()));
}

torch::Tensor BertSelfAttentionImpl::forward(const torch::Tensor& x) {
  const int64_t n = x.size(0), t = x.size(1), h = x.size(2), d = h / heads;
  auto split = [&](const torch::Tensor& y) { return y.view({n, t, heads, d}).transpose(1, 2); };  // [N, heads, T, d]
  const auto q = split(linear(query, x));
  const auto k = split(linear(key, x));
  const auto v = split(linear(value, x));
  const auto context = scaled_dot_product(q, k, v, /*causal=*/false, dropout, kernel);
  return linear(output, context.transpose(1, 2).reshape({n, t, h}));
}

BertLayerImpl::BertLayerImpl(const BertOptions& o) {
  attention = register_module("attention", BertSelfAttention(o));
  attention_norm = register_module("attention_norm", layer_norm_of(o));
  intermediate = register_module("intermediate", torch::nn::Linear(o.hidden(), o.ffn()));
  output = register_module("output", torch::nn::Linear(o.ffn(), o.hidden()));
  output_norm = register_module("output_norm", layer_norm_of(o));
  dropout = register_module("dropout", torch::nn::Dropout(o.dropout()));
}

torch::Tensor BertLayerImpl::forward(const torch::Tensor& x) {
  const auto a = attention_norm->forward(x + dropout->forward(attention->forward(x)));
  const auto f = linear(output, torch::gelu(linear(intermediate, a)));
  return output_norm->forward(a + dropout->forward(f));
}

BertModelImpl::BertModelImpl(const BertOptions& o, bool add_pooling_layer) : options(o) {
  embeddings = register_module("embeddings", BertEmbeddings(o));
  encoder = register_module("encoder", torch::nn::ModuleList());
  for (int64_t i = 0; i < o.layers(); ++i) encoder->push_back(BertLayer(o));
  if (add_pooling_layer) pooler = register_module("pooler", torch::nn::Linear(o.hidden(), o.hidden()));
}

std::pair<torch::Tensor, torch::Tensor> BertModelImpl::forward(const torch::Tensor& input_ids,
                                                               const torch::Tensor& token_type_ids) {
  auto x = embeddings->forward(input_ids, token_type_ids);
  for (const auto& layer : *encoder) x = layer->as<BertLayer>()->forward(x);
  if (!pooler) return {x, torch::Tensor()};
  return {x, torch::tanh(linear(pooler, x.select(1, 0)))};
}

BertLMHeadImpl::BertLMHeadImpl(const BertOptions& o) {
  transform = register_module("transform", torch::nn::Linear(o.hidden(), o.hidden()));
  transform_norm = register_module("transform_norm", layer_norm_of(o));
  decoder_bias = register_parameter("decoder_bias", torch::zeros({o.vocab()}));
}

torch::Tensor BertLMHeadImpl::forward(const torch::Tensor& sequence, const torch::Tensor& word_embeddings) {
  // Under autocast the dense layer's output is bf16/fp16; LibTorch 1.13's CPU LayerNorm takes no
  // mixed dtypes, so the input meets the norm in the norm's own dtype (as the residual sums do).
  const auto t = torch::gelu(linear(transform, sequence)).to(transform_norm->weight.scalar_type());
  const auto h = transform_norm->forward(t);
  // The decoder is tied to the token embedding: same tensor, so its gradient accumulates into it.
  return torch::linear(h, word_embeddings, decoder_bias);
}

BertForPreTrainingImpl::BertForPreTrainingImpl(const BertOptions& o) {
  bert = register_module("bert", BertModel(o, /*add_pooling_layer=*/true));
  lm_head = register_module("lm_head", BertLMHead(o));
  seq_relationship = register_module("seq_relationship", torch::nn::Linear(o.hidden(), 2));
  init_bert_weights(*this);
}

std::pair<torch::Tensor, torch::Tensor> BertForPreTrainingImpl::forward(const torch::Tensor& input_ids,
                                                                        const torch::Tensor& token_type_ids) {
  const auto [sequence, pooled] = bert->forward(input_ids, token_type_ids);
  return {lm_head->forward(sequence, bert->embeddings->word_embeddings->weight), linear(seq_relationship, pooled)};
}

int64_t BertForPreTrainingImpl::parameter_count() const { return unique_parameter_count(*this); }
int64_t BertForPreTrainingImpl::encoder_parameter_count() const { return unique_parameter_count(*bert); }

BertMaskedLMImpl::BertMaskedLMImpl(const BertOptions& o) {
  bert = register_module("bert", BertModel(o, /*add_pooling_layer=*/false));
  lm_head = register_module("lm_head", BertLMHead(o));
  init_bert_weights(*this);
}

torch::Tensor BertMaskedLMImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids) {
  return lm_head->forward(bert->forward(input_ids, token_type_ids).first, bert->embeddings->word_embeddings->weight);
}

int64_t BertMaskedLMImpl::parameter_count() const { return unique_parameter_count(*this); }
int64_t BertMaskedLMImpl::encoder_parameter_count() const { return unique_parameter_count(*bert); }

BertForQuestionAnsweringImpl::BertForQuestionAnsweringImpl(const BertOptions& o) {
  bert = register_module("bert", BertModel(o, /*add_pooling_layer=*/false));
  qa_outputs = register_module("qa_outputs", torch::nn::Linear(o.hidden(), 2));
  init_bert_weights(*this);
}

torch::Tensor BertForQuestionAnsweringImpl::forward(const torch::Tensor& input_ids,
                                                    const torch::Tensor& token_type_ids) {
  return qa_outputs->forward(bert->forward(input_ids, token_type_ids).first);
}

int64_t BertForQuestionAnsweringImpl::parameter_count() const { return unique_parameter_count(*this); }

int64_t unique_parameter_count(const torch::nn::Module& module) {
  std::unordered_set<const void*> seen;
  int64_t n = 0;
  for (const auto& p : module.parameters(/*recurse=*/true)) {
    if (seen.insert(p.unsafeGetTensorImpl()).second) n += p.numel();
  }
  return n;
}

void init_bert_weights(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  // Children only: a constructor may call this, before the module itself sits in a shared_ptr.
  for (auto& m : module.modules(/*include_self=*/false)) {
    if (auto* linear = m->as<torch::nn::Linear>()) {
      torch::nn::init::normal_(linear->weight, 0.0, 0.02);
      if (linear->bias.defined()) torch::nn::init::zeros_(linear->bias);
    } else if (auto* embedding = m->as<torch::nn::Embedding>()) {
      torch::nn::init::normal_(embedding->weight, 0.0, 0.02);
    } else if (auto* norm = m->as<torch::nn::LayerNorm>()) {
      torch::nn::init::ones_(norm->weight);
      torch::nn::init::zeros_(norm->bias);
    }
  }
}

}  // namespace trainbench::models
