#include "memory/step_memory.h"

#include <algorithm>
#include <unordered_set>

namespace trainbench::memory {

int64_t storage_bytes(const std::vector<torch::Tensor>& tensors) {
  std::unordered_set<const void*> seen;
  int64_t bytes = 0;
  for (const auto& t : tensors) {
    if (!t.defined() || !t.has_storage()) continue;
    const auto& s = t.storage();
    if (seen.insert(s.unsafeGetStorageImpl()).second) bytes += static_cast<int64_t>(s.nbytes());
  }
  return bytes;
}

StepMemoryMeter::StepMemoryMeter(const DeviceSpec& device) : probe_(device) {
  before_build_ = probe_.current_bytes();
  probe_.reset_peak();
}

void StepMemoryMeter::after_build(Workload& w) {
  after_build_ = probe_.current_bytes();
  std::vector<torch::Tensor> model = w.trainable_parameters();
  const std::vector<torch::Tensor> buffers = w.model_buffers();
  model.insert(model.end(), buffers.begin(), buffers.end());
  model_bytes_ = storage_bytes(model);
  workload_ = &w;
  w.set_phase_observer([this](StepPhase p) { on_phase(p); });
}

void StepMemoryMeter::add_comm_buffers(int64_t bytes) { comm_bytes_ += std::max<int64_t>(0, bytes); }

void StepMemoryMeter::on_phase(StepPhase phase) {
  if (after_optimizer_ >= 0) return;  // only the first step's phases
  if (phase == StepPhase::after_forward) {
    if (after_forward_ < 0) after_forward_ = probe_.current_bytes();
  } else if (phase == StepPhase::after_backward) {
    after_backward_ = probe_.current_bytes();
    if (comm_bytes_ > 0 && workload_ != nullptr) {
      std::vector<torch::Tensor> grads;
      for (const auto& p : workload_->trainable_parameters()) grads.push_back(p.grad());
      grad_storage_ = storage_bytes(grads);
    }
  } else if (after_backward_ >= 0) {
    after_optimizer_ = probe_.current_bytes();
  }
}

MemoryInfo StepMemoryMeter::finish(int64_t batch) const {
  MemoryInfo m;
  m.source = probe_.source();
  if (after_build_ >= 0) {
    m.parameters_bytes = model_bytes_;
    m.inputs_bytes = std::max<int64_t>(0, after_build_ - before_build_ - model_bytes_);
  }
  // The phases count from the end of the set-up: the build, and for data-parallel cases the buckets.
  const int64_t set_up = after_build_ + comm_bytes_;
  m.comm_buffer_bytes = comm_bytes_;
  if (after_forward_ >= 0 && after_build_ >= 0) m.forward_live_bytes = std::max<int64_t>(0, after_forward_ - set_up);
  if (after_backward_ >= 0) m.gradients_bytes = grad_storage_ >= 0 ? grad_storage_ : after_backward_ - set_up;
  if (after_optimizer_ >= 0) m.optimizer_bytes = after_optimizer_ - after_backward_;
  m.peak_bytes = probe_.peak_bytes() - before_build_;
  m.fixed_bytes = m.parameters_bytes + m.gradients_bytes + m.optimizer_bytes + m.comm_buffer_bytes;
  // One batch cannot separate what grows with the batch from what does not: everything above the
  // persistent state counts as per-sample here (a `memory` run fits the two apart).
  if (batch > 0)
    m.activations_bytes_per_sample = static_cast<double>(std::max<int64_t>(0, m.peak_bytes - m.fixed_bytes)) / batch;
  m.max_rss_bytes = probe_.max_rss_bytes();
  m.footprint_peak_bytes = probe_.footprint_peak_bytes();
  m.loader_address_space_bytes = probe_.loader_address_space_bytes();
  m.loader_peak_bytes = probe_.loader_peak_bytes();
  return m;
}

}  // namespace trainbench::memory
