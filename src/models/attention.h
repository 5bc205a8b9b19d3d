// The scaled dot-product core of multi-head attention, shared by bert and gpt:
// softmax(q k^T / sqrt(d) [+ causal mask]) v, with dropout on the probabilities.
// Two kernels: `math` writes it out with matmuls (so core/flops.h counts it, and `explain` times it as
// one layer); `sdpa` calls LibTorch's scaled_dot_product_attention (2.0 and later: flash and
// memory-efficient kernels on GPUs). LibTorch 1.13 has only `math`.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

#include "cases/attention_kernel.h"

namespace trainbench::models {

// Allows exactly the sdpa backends `k` names (all of them for sdpa) in LibTorch's global context; a
// no-op for math and on 1.13. Models call it when built: a case runs in its own process.
void select_sdpa_backends(AttentionKernel k);

// q, k, v: [N, heads, T, d] -> [N, heads, T, d]. `dropout_p` applies in training only (the math kernel
// draws it through `dropout`, the module the model registered).
torch::Tensor scaled_dot_product(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                 torch::nn::Dropout& dropout, AttentionKernel kernel);

// While one is alive on this thread, every attention runs the math kernel: FLOPs are counted from the
// explicit products whatever kernel the case uses (a fused kernel dispatches no countable matmul).
class MathAttentionScope {
 public:
  MathAttentionScope();
  ~MathAttentionScope();
  MathAttentionScope(const MathAttentionScope&) = delete;
  MathAttentionScope& operator=(const MathAttentionScope&) = delete;

 private:
  bool prev_;
};

}  // namespace trainbench::models
