// What a CUDA card's memory holds beyond a step's tensors: measured once on an H100 and used wherever a
// card's memory is predicted (`memory`'s GPU targets from a CPU run, `predict`). Torch-free.
#pragma once
#include <cstdint>

namespace trainbench {

// The runtime's context and the libraries' handles, outside the caching allocator: 726,466,560 bytes
// (693 MiB) on an H100 with LibTorch 2.11, CUDA 13.0 and cuDNN 9.19 once cuBLAS and cuDNN had run
// (examples/h100/gpu-fixed-costs.txt: total - free - reserved). A user's own stack may differ: memory
// --gpu-context, predict --gpu-context.
constexpr int64_t kGpuContextBytes = 726466560;
// What the allocator reserves per CPU tensor byte at the largest batch a capped card trains (the
// cuBLAS and cuDNN workspaces, the backward's temporaries on the card, the allocator's rounding and its
// cached blocks, less what the card's kernels save: its attention keeps no probabilities). Measured on
// that H100, fp32, SGD, `maxbatch --memory-limit 4G` against the CPU's exact tensor peak at the same
// batch: resnet18 at 155, 4,276,092,928 reserved / 3,542,546,884 = 1.207; bert (2 layers, seq 128) at
// 52, 4,265,607,168 / 3,699,555,388 = 1.153. Most likely their mean; at most the larger plus their
// spread. Each one alone predicts the other within 6% (docs/memory.md).
constexpr double kGpuReservedPerTensorByte = 1.18;
constexpr double kGpuReservedPerTensorByteMax = 1.26;

}  // namespace trainbench
