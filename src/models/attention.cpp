#include "models/attention.h"

#include <ATen/record_function.h>
#include <torch/version.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#if TORCH_VERSION_MAJOR >= 2
#define TRAINBENCH_HAS_SDPA 1
#endif

namespace trainbench::models {
namespace {
thread_local bool force_math = false;
}  // namespace

const std::vector<std::string>& available_attention_kernels() {
#ifdef TRAINBENCH_HAS_SDPA
  static const std::vector<std::string> v = {"math", "sdpa"};
#else
  static const std::vector<std::string> v = {"math"};
#endif
  return v;
}

AttentionKernel attention_kernel_from(const std::string& name) {
  if (name == "math") return AttentionKernel::math;
  if (name == "sdpa") {
#ifdef TRAINBENCH_HAS_SDPA
    return AttentionKernel::sdpa;
#else
    throw std::invalid_argument(
        std::string("sdpa (scaled_dot_product_attention) needs LibTorch 2.0 or later; this is ") + TORCH_VERSION +
        ", use attention=math");
#endif
  }
  throw std::invalid_argument("expected one of: math, sdpa");
}

const char* default_attention_kernel() {
#ifdef TRAINBENCH_HAS_SDPA
  return "sdpa";
#else
  return "math";
#endif
}

std::string attention_param_help() {
  return std::string("sdpa (scaled_dot_product_attention: fused kernels, LibTorch 2.0 or later) or math (explicit "
                     "matmul-softmax-matmul); default here: ") +
         default_attention_kernel();
}

const char* to_string(AttentionKernel k) { return k == AttentionKernel::sdpa ? "sdpa" : "math"; }

MathAttentionScope::MathAttentionScope() : prev_(force_math) { force_math = true; }
MathAttentionScope::~MathAttentionScope() { force_math = prev_; }

torch::Tensor scaled_dot_product(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                 torch::nn::Dropout& dropout, AttentionKernel kernel) {
  // Names the core for observers (`trainbench explain` times it as one layer), whichever kernel runs.
  RECORD_FUNCTION("trainbench::attention", std::vector<c10::IValue>({q, k, v}));
#ifdef TRAINBENCH_HAS_SDPA
  if (kernel == AttentionKernel::sdpa && !force_math) {
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
