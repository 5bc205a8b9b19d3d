// Activation checkpointing (Chen et al. 2016, "Training deep nets with sublinear memory cost"), as
// PyTorch's torch.utils.checkpoint does it with use_reentrant=True: the forward of a segment runs
// without keeping its activations; backward runs it again under grad mode and backpropagates through
// the recomputed graph. Only the segment's input is kept. The recomputation sees the same random draws
// (dropout) and the same autocast state as the first forward.
#pragma once
#include <torch/torch.h>

#include <functional>

namespace trainbench::models {

using Segment = std::function<torch::Tensor(const torch::Tensor&)>;

// segment(x), its activations dropped and recomputed in backward. The segment's parameters receive their
// gradients during that recomputation; `x` gets its gradient as usual. Without grad mode (inference,
// FLOP counting of a forward-only step) it is segment(x) itself.
torch::Tensor checkpoint(const Segment& segment, const torch::Tensor& x);

}  // namespace trainbench::models
