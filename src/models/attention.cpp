#include "models/attention.h"

#include <ATen/record_function.h>
#include <torch/version.h>

#include <cmath>
#include <utility>
#include <limits>
#include <stdexcept>

#include <ATen/Context.h>

#if TORCH_VERSION_MAJOR >= 2
#define TRAINBENCH_HAS_SDPA 1
#endif
// The cuDNN backend of scaled_dot_product_attention and its switch in the global context: 2.4 on.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define TRAINBENCH_HAS_CUDNN_SDPA 1
#endif

namespace trainbench::models {
namespace {
thread_local bool force_math = false;
}  // namespace

void select_sdpa_backends(AttentionKernel k) {
#ifdef TRAINBENCH_HAS_SDPA
  if (k == AttentionKernel::math) return;
  const bool all = k == AttentionKernel::sdpa;
  auto& ctx = at::globalContext();
  ctx.setSDPUseFlash(all || k == AttentionKernel::flash);
  ctx.setSDPUseMemEfficient(all || k == AttentionKernel::efficient);
  ctx.setSDPUseMath(all);  // LibTorch's own math fallback: allowed only when it may choose
#ifdef TRAINBENCH_HAS_CUDNN_SDPA
  ctx.setSDPUseCuDNN(all || k == AttentionKernel::cudnn);
#endif
#else
  (void)k;
#endif
}

MathAttentionScope::MathAttentionScope() : prev_(force_math) { force_math = true; }
MathAttentionScope::~MathAttentionScope() { force_math = prev_; }

torch::Tensor scaled_dot_product(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                 torch::nn::Dropout& dropout, AttentionKernel kernel) {
  // Names the core for observers (`trainbench explain` times it as one layer), whichever kernel runs.
  RECORD_FUNCTION("trainbench::attention", std::vector<c10::IValue>({q, k, v}));
#ifdef TRAINBENCH_HAS_SDPA
  if (kernel != AttentionKernel::math && !force_math) {
    const double p = dropout->is_training() ? dropout->options.p() : 0.0;
    return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, p, causal);
  }
#else
  (void)kernel;
#endif
  const int64_t t = q.size(-2), d = q.size(-1);
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(d));
  if (causal) {
    // Position i sees positions 0..i: the strict upper triangle is masked out before the softmax.
    const auto future = torch::ones({t, k.size(-2)}, q.options().dtype(torch::kBool)).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<double>::infinity());
  }
  const auto probs = dropout->forward(torch::softmax(scores, -1));
  return torch::matmul(probs, v);
}

}  // namespace trainbench::models
