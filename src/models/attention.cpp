#include "models/attention.h"

#include <ATen/record_function.h>
#include <torch/version.h>

#include <algorithm>
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

const std::vector<std::string>& available_attention_kernels() {
#if defined(TRAINBENCH_HAS_CUDNN_SDPA)
  static const std::vector<std::string> v = {"math", "sdpa", "flash", "efficient", "cudnn"};
#elif defined(TRAINBENCH_HAS_SDPA)
  static const std::vector<std::string> v = {"math", "sdpa", "flash", "efficient"};
#else
  static const std::vector<std::string> v = {"math"};
#endif
  return v;
}

namespace {

// Every kernel by its parameter text: the one table both directions read.
const std::vector<std::pair<std::string, AttentionKernel>>& kernel_names() {
  static const std::vector<std::pair<std::string, AttentionKernel>> kernels = {
      {"math", AttentionKernel::math},           {"sdpa", AttentionKernel::sdpa},   {"flash", AttentionKernel::flash},
      {"efficient", AttentionKernel::efficient}, {"cudnn", AttentionKernel::cudnn},
  };
  return kernels;
}

}  // namespace

AttentionKernel attention_kernel_from(const std::string& name) {
  for (const auto& [n, k] : kernel_names()) {
    if (n != name) continue;
    const auto& here = available_attention_kernels();
    if (std::find(here.begin(), here.end(), name) != here.end()) return k;
    throw std::invalid_argument(name + " (scaled_dot_product_attention" +
                                (k == AttentionKernel::sdpa ? std::string() : " with only its " + name + " backend") +
                                ") needs LibTorch " + (k == AttentionKernel::cudnn ? "2.4" : "2.0") +
                                " or later; this is " + TORCH_VERSION + ", use attention=math");
  }
  throw std::invalid_argument("expected one of: math, sdpa, flash, efficient, cudnn");
}

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

const char* default_attention_kernel() {
#ifdef TRAINBENCH_HAS_SDPA
  return "sdpa";
#else
  return "math";
#endif
}

std::string attention_param_help() {
  return std::string(
             "sdpa (scaled_dot_product_attention: fused kernels, LibTorch 2.0 or later; flash, efficient or cudnn "
             "allow only that backend) or math (explicit matmul-softmax-matmul); default here: ") +
         default_attention_kernel();
}

const char* to_string(AttentionKernel k) {
  for (const auto& [n, kernel] : kernel_names()) {
    if (kernel == k) return n.c_str();
  }
  return "math";
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
