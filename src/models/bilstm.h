// The seed study's sequence classifier: token embedding -> stacked bidirectional LSTM (LibTorch's
// fused LSTM, batch-first) -> mean over time -> linear classifier.
#pragma once
#include <torch/torch.h>

#include <cstdint>

#include "core/flops.h"

namespace trainbench::models {

struct BiLSTMOptions {
  TORCH_ARG(int64_t, vocab) = 20000;
  TORCH_ARG(int64_t, embed) = 256;
  TORCH_ARG(int64_t, hidden) = 256;  // per direction
  TORCH_ARG(int64_t, layers) = 2;
  TORCH_ARG(int64_t, classes) = 2;
};

struct BiLSTMImpl : torch::nn::Module {
  explicit BiLSTMImpl(const BiLSTMOptions& options = {});
  // [N, T] token ids -> [N, classes] logits
  torch::Tensor forward(torch::Tensor tokens);

  BiLSTMOptions options;
  torch::nn::Embedding embedding{nullptr};
  torch::nn::LSTM lstm{nullptr};
  torch::nn::Linear classifier{nullptr};
};
TORCH_MODULE(BiLSTM);

// Forward FLOPs of one batch, by formula: aten::lstm is one opaque operator, so core/flops.h cannot
// see its GEMMs. Per layer, per direction, per time step the four gates cost
// 2 * 4*hidden * (input + hidden) * batch FLOPs (input = embed for layer 0, 2*hidden above it), plus
// the classifier's 2 * 2*hidden * classes * batch. Gate non-linearities and the pooling are left out,
// as core/flops.h leaves out every element-wise op.
double bilstm_forward_flops(const BiLSTMOptions& options, int64_t batch, int64_t seq);
// The training step by the same rule as core/flops.h: every product here has both backward parts,
// since every LSTM input requires a gradient (layer 0 reads the trainable embedding, the gates the
// previous hidden state) and so does the classifier's: backward-data = backward-weights = forward.
StepFlops bilstm_step_flops(const BiLSTMOptions& options, int64_t batch, int64_t seq);

}  // namespace trainbench::models
