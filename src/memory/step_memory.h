// The breakdown of one case's memory from the phases of its first training step: bytes live after
// building the workload (parameters and buffers, the synthetic batch), after the first backward (the
// gradients), after the first optimizer step (its state), and the peak of the whole case above those
// (activations and temporaries). Only reads the allocator; never prints.
#pragma once
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "memory/probe.h"
#include "results/memory_info.h"
#include "workloads/workload.h"

namespace trainbench::memory {

// Bytes of the distinct storages behind `tensors` (a storage shared by two tensors counts once).
int64_t storage_bytes(const std::vector<torch::Tensor>& tensors);

class StepMemoryMeter {
 public:
  // Reads the bytes live before the workload exists and restarts the peak from them.
  explicit StepMemoryMeter(const DeviceSpec& device);
  StepMemoryMeter(const StepMemoryMeter&) = delete;
  StepMemoryMeter& operator=(const StepMemoryMeter&) = delete;

  // Right after building `w`: reads its bytes and watches the phases of its first training step. The
  // meter must outlive `w` (the observer stays attached; after the first step it only returns).
  void after_build(Workload& w);
  // Data-parallel cases, before the first step: the gradient all-reduce's buckets (`bytes`, their
  // storage) are comm_buffer_bytes, and the phases count from the build plus them. Their size, not a
  // reading of the allocator: the set-up's broadcast frees its temporaries on the communication
  // library's threads, perhaps after the set-up returns.
  void add_comm_buffers(int64_t bytes);
  // After the last step (or a failure): the breakdown. Phases not reached are 0.
  MemoryInfo finish(int64_t batch) const;

 private:
  void on_phase(StepPhase phase);

  MemoryProbe probe_;
  int64_t before_build_ = 0;
  int64_t after_build_ = -1;    // -1: the build did not finish
  int64_t model_bytes_ = 0;     // parameters and buffers
  int64_t comm_bytes_ = 0;      // the all-reduce's buckets (add_comm_buffers)
  int64_t after_forward_ = -1;  // -1: no training step reached that phase
  int64_t after_backward_ = -1;
  int64_t after_optimizer_ = -1;
  // Data-parallel cases: the gradients' own storage after the first backward. The allocator's reading
  // there also holds what the communication library's threads have not yet freed of the all-reduce
  // (it was seen reading the gradients twice over), so the gradients are read from the tensors.
  int64_t grad_storage_ = -1;
  Workload* workload_ = nullptr;
};

}  // namespace trainbench::memory
