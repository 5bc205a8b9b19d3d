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

namespace {

// Every kernel: its parameter text, and the LibTorch it needs ("" for any; whether this build has it).
struct KernelName {
  const char* name;
  AttentionKernel kernel;
  const char* needs;
  bool here;
};

#ifdef TRAINBENCH_HAS_SDPA
constexpr bool kSdpa = true;
#else
constexpr bool kSdpa = false;
#endif
#ifdef TRAINBENCH_HAS_CUDNN_SDPA
constexpr bool kCudnnSdpa = true;
#else
constexpr bool kCudnnSdpa = false;
#endif

// The one table the parse, the printing and the list of available kernels read.
const std::vector<KernelName>& kernel_names() {
  static const std::vector<KernelName> kernels = {
      {"math", AttentionKernel::math, "", true},
      {"sdpa", AttentionKernel::sdpa, "2.0", kSdpa},
      {"flash", AttentionKernel::flash, "2.0", kSdpa},
      {"efficient", AttentionKernel::efficient, "2.0", kSdpa},
      {"cudnn", AttentionKernel::cudnn, "2.4", kCudnnSdpa},
  };
  return kernels;
}

}  // namespace

const std::vector<std::string>& available_attention_kernels() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> out;
    for (const auto& k : kernel_names()) {
      if (k.here) out.emplace_back(k.name);
    }
    return out;
  }();
  return v;
}

AttentionKernel attention_kernel_from(const std::string& name) {
  std::string all;
  for (const auto& k : kernel_names()) {
    all += (all.empty() ? "" : ", ") + std::string(k.name);
    if (name != k.name) continue;
    if (k.here) return k.kernel;
    throw std::invalid_argument(
        name + " (scaled_dot_product_attention" +
        (k.kernel == AttentionKernel::sdpa ? std::string() : " with only its " + name + " backend") +
        ") needs LibTorch " + k.needs + " or later; this is " + TORCH_VERSION + ", use attention=math");
  }
  throw std::invalid_argument("expected one of: " + all);
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
  for (const auto& n : kernel_names()) {
    if (n.kernel == k) return n.name;
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
