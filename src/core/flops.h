// Floating-point operation counts from layer shapes. One multiply-add counts as 2 FLOPs.
// Only the operations that dominate training cost are counted: convolutions and matrix products
// (addmm/mm/bmm/baddbmm, and so linear layers and attention). Normalisation, activations, pooling
// and element-wise ops are left out; docs/methodology.md says so next to every GFLOP/s figure.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace trainbench {

// 2 * N * C_out * H_out * W_out * (C_in / groups) * k_h * k_w (any number of spatial dims).
double conv_flops(int64_t batch, int64_t in_channels, int64_t out_channels, int64_t groups,
                  const std::vector<int64_t>& kernel, const std::vector<int64_t>& output_spatial);
// 2 * M * N * K, times the batch count for batched products.
double matmul_flops(int64_t m, int64_t n, int64_t k, int64_t batch = 1);

// Runs `fn` once and returns the FLOPs of the convolutions and matrix products that LibTorch
// dispatches while it runs, read from the operators' real input shapes (an at::RecordFunction
// observer on this thread). Nested calls of counted operators are counted once.
double count_flops(const std::function<void()>& fn);

// Training FLOPs per step from forward FLOPs: forward + backward-data + backward-weights = 3x.
inline double training_flops(double forward_flops) { return 3.0 * forward_flops; }

}  // namespace trainbench
