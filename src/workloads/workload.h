// A Workload: a model, a synthetic batch already on the device, a loss and an optimizer.
// `step()` is one training step (zero_grad, forward, loss, backward, optimizer step); the caller
// synchronises the device and reads the clock. Workloads know nothing of runners or results.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "cases/options.h"
#include "core/device.h"
#include "core/precision.h"
#include "core/flops.h"
#include "data/loader_stats.h"

namespace trainbench {

// Data parallelism (src/dist) averages gradients across processes between backward and the optimizer
// step. A workload offers the two points to do it at; it knows nothing of process groups.
class GradientSync {
 public:
  virtual ~GradientSync() = default;
  virtual void before_backward() = 0;  // a step's gradients are about to arrive
  virtual void after_backward() = 0;   // backward returned: every .grad must hold the average when this returns
};

// Points inside a training step where src/memory reads the allocator: backward has returned (the
// gradients exist), the optimizer step has returned (its state exists).
// after_forward: the loss is computed and backward has not started (every activation the backward
// needs is live).
enum class StepPhase { after_forward, after_backward, after_optimizer_step };

class Workload {
 public:
  virtual ~Workload() = default;
  virtual void step() = 0;
  virtual int64_t samples_per_step() const = 0;
  virtual std::string unit() const = 0;       // e.g. "images/s"
  virtual double flops_per_step() const = 0;  // per layer: forward + backward-data + backward-weights (core/flops.h)
  // flops_per_step by pass (forward, backward-data, backward-weights); all 0 when not counted.
  virtual StepFlops step_flops() const { return {}; }
  virtual int64_t parameters() const = 0;
  // Tokens per step for sequence workloads (batch x sequence length); 0 for the others.
  virtual int64_t tokens_per_step() const { return 0; }
  // Language models: one step's model FLOPs by the PaLM formula (6 N + 12 L H T per token for training,
  // docs/methodology.md), the numerator of MFU; 0 for other workloads. hardware_flops_per_step adds the
  // forward that activation checkpointing recomputes (the numerator of HFU); 0 without recomputation.
  virtual double model_flops_per_step() const { return 0.0; }
  virtual double hardware_flops_per_step() const { return 0.0; }
  // The loss of the last training step (synchronises; call outside timing). 0 for forward-only.
  virtual double last_loss() const = 0;
  // Warm-up steps this workload needs at least before its step time can settle (e.g. a TorchScript
  // executor's profiling runs); the warm-up rule waits for the step time to settle after them.
  virtual long min_warmup_steps() const { return 0; }
  // fp16 mixed precision: optimizer steps the loss scaler skipped so far (a gradient was inf or NaN),
  // and its current scale. 0 and NaN when the workload scales no loss.
  virtual int64_t skipped_steps() const { return 0; }
  virtual double loss_scale() const { return std::numeric_limits<double>::quiet_NaN(); }
  // The model's trainable parameters and its buffers (for broadcasting the initial state and for
  // gradient averaging). Empty when the workload cannot train data-parallel.
  virtual std::vector<torch::Tensor> trainable_parameters() const { return {}; }
  virtual std::vector<torch::Tensor> model_buffers() const { return {}; }
  // Called around every backward from now on; nullptr detaches. Not owned.
  virtual void set_gradient_sync(GradientSync* sync) {}
  // Real data (--data): blocks until the loader has the next batch and makes it the next step's input.
  // The step sampler times this call as the step's data wait; synthetic data has nothing to wait for.
  virtual void next_batch() {}
  // Of the last next_batch(), the seconds spent waiting for the host-to-device copy that the previous
  // step did not hide (GPU cases; the copy runs on a side stream while the previous step computes).
  // 0 on CPU, where the batch is made where it is used.
  virtual double last_copy_wait_s() const { return 0.0; }
  // The input pipeline's counters so far; nullopt for synthetic data.
  virtual std::optional<LoaderStats> loader_stats() const { return std::nullopt; }
  // Called at each StepPhase of every training step from now on; empty detaches. Measuring sets it for
  // one untimed step only. Workloads that cannot report phases ignore it.
  virtual void set_phase_observer(std::function<void(StepPhase)> observer) {}
};

}  // namespace trainbench
