// What the decoder language models (gpt, llama) share: next-token training on synthetic tokens or a token
// file (--data), cross-entropy over every position as nanoGPT, llm.c and torchtitan train them, tokens/s,
// and model FLOPs by the PaLM formula for MFU (docs/methodology.md):
//   per token, forward 2 N + 4 L A T; training 3 x that (6 N + 12 L A T)
// N: the parameters whose product runs at every token (the model says which), L: blocks, A: the
// attention width (query heads x head dim), T: the sequence. With activation checkpointing the hardware
// FLOPs add the recomputed forward of the blocks (2 N_blocks + 4 L A T per token).
#pragma once
#include <torch/torch.h>

#include <functional>

#include "workloads/training.h"

namespace trainbench::detail {

class DecoderLmWorkload : public LossWorkload {
 public:
  double model_flops_per_step() const override { return model_flops_; }
  double hardware_flops_per_step() const override { return hardware_flops_; }

 protected:
  explicit DecoderLmWorkload(const WorkloadOptions& o) : LossWorkload(o, "sequences/s") {}

  // The case's first batch: seq + 1 random ids below `vocab` per sequence (input the first seq, targets
  // the last seq), or with --data the loader's windows. Call after building the model (seed_batch).
  void first_batch(int64_t seq, int64_t vocab);
  // One sequence's step counted with the explicit attention products (a fused kernel dispatches no
  // countable matmul), scaled to the batch: the step's own FLOPs, without recomputation.
  StepFlops count_batch_flops(const std::function<torch::Tensor(const torch::Tensor&)>& forward) const;
  // Model and hardware FLOPs by the formula above.
  struct FormulaShape {
    double n = 0.0;                 // N
    double block_parameters = 0.0;  // what checkpointing recomputes
    double layers = 0.0, attention_width = 0.0;
  };
  void set_model_flops(int64_t seq, const FormulaShape& s, bool checkpoint);

  torch::Tensor input_, targets_;

 private:
  void take_batch(std::vector<torch::Tensor>& t) override;
  torch::Tensor loss(const torch::Tensor& logits) override;

  double model_flops_ = 0.0, hardware_flops_ = 0.0;
};

}  // namespace trainbench::detail
