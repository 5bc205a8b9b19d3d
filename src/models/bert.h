// BERT (Devlin et al. 2018) as Hugging Face's classes build it: BertModel (embeddings with segment
// types, post-LN encoder layers with erf-GELU, LayerNorm eps 1e-12, optional pooler), BertForPreTraining
// (masked-LM head + next-sentence head on the pooled first token) and BertForMaskedLM (masked-LM head,
// no pooler). The default options give bert-base-uncased's parameter counts. Attention is written out with matmuls
// (softmax(q k^T / sqrt(d)) v) so that core/flops.h counts its FLOPs as well as the linear layers', or on
// LibTorch 2.x optionally runs scaled_dot_product_attention (models/attention.h).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <utility>

#include "models/attention.h"

namespace trainbench::models {

struct BertOptions {
  // The feed-forward width in effect. (First: TORCH_ARG leaves the members after it private.)
  int64_t ffn() const { return intermediate_ > 0 ? intermediate_ : 4 * hidden_; }

  TORCH_ARG(int64_t, vocab) = 30522;
  TORCH_ARG(int64_t, hidden) = 768;
  TORCH_ARG(int64_t, layers) = 12;
  TORCH_ARG(int64_t, heads) = 12;        // must divide hidden
  TORCH_ARG(int64_t, intermediate) = 0;  // feed-forward width; 0 means 4 * hidden
  TORCH_ARG(int64_t, max_pos) = 512;     // longest sequence the position embedding covers
  TORCH_ARG(int64_t, type_vocab) = 2;    // segments
  TORCH_ARG(double, dropout) = 0.1;      // hidden and attention-probability dropout
  TORCH_ARG(double, layer_norm_eps) = 1e-12;
  TORCH_ARG(AttentionKernel, attention) = AttentionKernel::math;  // models/attention.h
};

// Token + position + segment embeddings, summed, then LayerNorm and dropout.
struct BertEmbeddingsImpl : torch::nn::Module {
  explicit BertEmbeddingsImpl(const BertOptions& o);
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);

  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr}, token_type_embeddings{nullptr};
  torch::nn::LayerNorm layer_norm{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(BertEmbeddings);

// Multi-head self-attention, no mask (every synthetic token is real): Q, K, V and output linears with bias.
struct BertSelfAttentionImpl : torch::nn::Module {
  explicit BertSelfAttentionImpl(const BertOptions& o);
  torch::Tensor forward(const torch::Tensor& x);  // [N, T, H] -> [N, T, H], before the residual

  int64_t heads;
  AttentionKernel kernel;
  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr}, output{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(BertSelfAttention);

// One post-LN encoder layer: attention, residual + LayerNorm, GELU feed-forward, residual + LayerNorm.
struct BertLayerImpl : torch::nn::Module {
  explicit BertLayerImpl(const BertOptions& o);
  torch::Tensor forward(const torch::Tensor& x);

  BertSelfAttention attention{nullptr};
  torch::nn::LayerNorm attention_norm{nullptr};
  torch::nn::Linear intermediate{nullptr}, output{nullptr};
  torch::nn::LayerNorm output_norm{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(BertLayer);

// Embeddings, the encoder stack and, with `add_pooling_layer`, the pooler (dense + tanh on the first
// token): Hugging Face's BertModel.
struct BertModelImpl : torch::nn::Module {
  explicit BertModelImpl(const BertOptions& o = {}, bool add_pooling_layer = true);
  // [N, T] ids and segment ids -> {sequence output [N, T, H], pooled output [N, H] (undefined without
  // a pooler)}
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);

  BertOptions options;
  BertEmbeddings embeddings{nullptr};
  torch::nn::ModuleList encoder{nullptr};
  torch::nn::Linear pooler{nullptr};
};
TORCH_MODULE(BertModel);

// The masked-LM head (Hugging Face's BertLMPredictionHead): dense + GELU + LayerNorm ("transform"),
// then a decoder whose weight is the token embedding (tied, passed to forward) with a bias of its own.
struct BertLMHeadImpl : torch::nn::Module {
  explicit BertLMHeadImpl(const BertOptions& o);
  // [N, T, H] sequence output -> [N, T, vocab] logits, at every position.
  torch::Tensor forward(const torch::Tensor& sequence, const torch::Tensor& word_embeddings);

  torch::nn::Linear transform{nullptr};
  torch::nn::LayerNorm transform_norm{nullptr};
  torch::Tensor decoder_bias;
};
TORCH_MODULE(BertLMHead);

// Hugging Face's BertForPreTraining: BertModel with its pooler, the masked-LM head on the sequence
// output and the next-sentence head (Linear(H, 2)) on the pooled first token.
struct BertForPreTrainingImpl : torch::nn::Module {
  explicit BertForPreTrainingImpl(const BertOptions& o = {});
  // [N, T] ids and segment ids -> {MLM logits [N, T, vocab], next-sentence logits [N, 2]}
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);

  // Distinct parameter elements, the tied decoder weight counted once.
  int64_t parameter_count() const;
  // The same for the BertModel part alone (embeddings, encoder, pooler).
  int64_t encoder_parameter_count() const;

  BertModel bert{nullptr};
  BertLMHead lm_head{nullptr};
  torch::nn::Linear seq_relationship{nullptr};
};
TORCH_MODULE(BertForPreTraining);

// Hugging Face's BertForMaskedLM: BertModel without a pooler (nothing would read it) and the masked-LM head.
struct BertMaskedLMImpl : torch::nn::Module {
  explicit BertMaskedLMImpl(const BertOptions& o = {});
  // [N, T] ids and segment ids -> [N, T, vocab] logits.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);

  // Distinct parameter elements, the tied decoder weight counted once.
  int64_t parameter_count() const;
  // The same for the BertModel part alone (embeddings, encoder).
  int64_t encoder_parameter_count() const;

  BertModel bert{nullptr};
  BertLMHead lm_head{nullptr};
};
TORCH_MODULE(BertMaskedLM);

// Hugging Face's BertForQuestionAnswering (SQuAD fine-tuning): BertModel without a pooler and a
// Linear(H, 2) giving each position a start and an end logit.
struct BertForQuestionAnsweringImpl : torch::nn::Module {
  explicit BertForQuestionAnsweringImpl(const BertOptions& o = {});
  // [N, T] ids and segment ids -> [N, T, 2] start and end logits.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);
  int64_t parameter_count() const;

  BertModel bert{nullptr};
  torch::nn::Linear qa_outputs{nullptr};
};
TORCH_MODULE(BertForQuestionAnswering);

// Elements of the distinct parameter tensors of `module` (a tensor registered twice counts once).
int64_t unique_parameter_count(const torch::nn::Module& module);

// BERT's initialisation of every submodule of `module` (not `module` itself): linear and embedding
// weights N(0, 0.02), biases 0, LayerNorm 1 and 0.
void init_bert_weights(torch::nn::Module& module);

}  // namespace trainbench::models
