#include "cases/attention_kernel.h"

#include <stdexcept>

// The LibTorch this build uses, as CMake found it (TRAINBENCH_TORCH_MAJOR, _MINOR, _VERSION): the one
// fact of LibTorch this torch-free module needs.

namespace trainbench::models {
namespace {

// Every kernel: its parameter text, and the LibTorch it needs ("" for any; whether this build has it).
struct KernelName {
  const char* name;
  AttentionKernel kernel;
  const char* needs;
  bool here;
};

// scaled_dot_product_attention from 2.0; its cuDNN backend and that backend's switch from 2.4.
constexpr bool kSdpa = TRAINBENCH_TORCH_MAJOR >= 2;
constexpr bool kCudnnSdpa = TRAINBENCH_TORCH_MAJOR > 2 || (TRAINBENCH_TORCH_MAJOR == 2 && TRAINBENCH_TORCH_MINOR >= 4);

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
        ") needs LibTorch " + k.needs + " or later; this is " + std::string(TRAINBENCH_TORCH_VERSION) +
        ", use attention=math");
  }
  throw std::invalid_argument("expected one of: " + all);
}

const char* default_attention_kernel() { return kSdpa ? "sdpa" : "math"; }

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

}  // namespace trainbench::models
