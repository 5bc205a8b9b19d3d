// The attention kernels a bert, gpt or llama case may ask for (`--set attention=`), without LibTorch:
// their names, which of them this build's LibTorch offers (its version is a compile definition), and
// the default. models/attention.h runs them.
#pragma once
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
const char* to_string(AttentionKernel k);
// The kernels this LibTorch build offers: {"math"} on 1.13, {"math", "sdpa", "flash", "efficient"} from
// 2.0, and "cudnn" from 2.4.
const std::vector<std::string>& available_attention_kernels();
// What bert and gpt use unless told: sdpa where the build has it (what training on 2.x runs), else math.
const char* default_attention_kernel();
// The attention parameter's help line, the same for bert and gpt, naming this build's default.
std::string attention_param_help();

}  // namespace trainbench::models
