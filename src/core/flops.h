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

// The FLOPs of one step, per pass. A counted product out = f(a, b) (a convolution's input and weight,
// a matrix product's two operands) costs the same multiply-adds in each backward product that
// autograd runs for it: the gradient of a (backward-data) when a requires a gradient, the gradient of
// b when b does. Autograd skips the gradient of an operand that needs none: a model's first layer has
// no backward-data (its input is the data), a frozen weight no backward-weights.
struct StepFlops {
  double forward = 0.0;
  double backward_data = 0.0;     // gradients of activations (a layer's input; both operands of q k^T)
  double backward_weights = 0.0;  // gradients of parameters (leaf tensors, or views of them as W^T)

  double training() const { return forward + backward_data + backward_weights; }
  StepFlops scaled(double factor) const {
    return {forward * factor, backward_data * factor, backward_weights * factor};
  }
  StepFlops& operator+=(const StepFlops& o) {
    forward += o.forward;
    backward_data += o.backward_data;
    backward_weights += o.backward_weights;
    return *this;
  }
};

// Runs `fn` once and returns the FLOPs of the convolutions and matrix products that LibTorch
// dispatches while it runs, read from the operators' real input shapes (an at::RecordFunction
// observer on this thread), with the backward products each one will need read from which operands
// require a gradient. Run a forward pass with gradients enabled to count a training step; under
// no-grad the backward parts are 0. Nested calls of counted operators are counted once.
StepFlops count_step_flops(const std::function<void()>& fn);
// The forward part alone.
double count_flops(const std::function<void()>& fn);

}  // namespace trainbench
