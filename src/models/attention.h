// The scaled dot-product core of multi-head attention, shared by bert and gpt:
// softmax(q k^T / sqrt(d) [+ causal mask]) v, with dropout on the probabilities.
// Two kernels: `math` writes it out with matmuls (so core/flops.h counts it, and `explain` times it as
// one layer); `sdpa` calls LibTorch's scaled_dot_product_attention (2.0 and later: flash and
// memory-efficient kernels on GPUs). LibTorch 1.13 has only `math`.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

namespace trainbench::models {

// math: the explicit products. sdpa: scaled_dot_product_attention, LibTorch choosing among its
// backends. flash, efficient, cudnn: sdpa with only that backend allowed (the others, math's fallback
// included, forbidden through the global context): a shape or type the backend cannot take fails the
// case with LibTorch's reason instead of silently running another kernel.
enum class AttentionKernel { math, sdpa, flash, efficient, cudnn };

// "math" | "sdpa" | "flash" | "efficient" | "cudnn"; throws std::invalid_argument for another name, or
// for a kernel this LibTorch lacks (naming the version).
AttentionKernel attention_kernel_from(const std::string& name);
// Allows exactly the sdpa backends `k` names (all of them for sdpa) in LibTorch's global context; a
// no-op for math and on 1.13. Models call it when built: a case runs in its own process.
void select_sdpa_backends(AttentionKernel k);
const char* to_string(AttentionKernel k);
// The kernels this LibTorch build offers: {"math"} on 1.13, {"math", "sdpa", "flash", "efficient"} from
// 2.0, and "cudnn" from 2.4.
const std::vector<std::string>& available_attention_kernels();
// What bert and gpt use unless told: sdpa where the build has it (what training on 2.x runs), else math.
const char* default_attention_kernel();
// The attention parameter's help line, the same for bert and gpt, naming this build's default.
std::string attention_param_help();

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
