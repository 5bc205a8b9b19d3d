#include "runner/memory_estimate.h"

#include <algorithm>
#include <cmath>

#include "memory/fit.h"

namespace trainbench {

std::string prediction_assumptions(const DeviceSpec& device) {
  if (device.is_gpu()) {
    return "peak reserved bytes of the caching allocator on this GPU model, settings and LibTorch; the CUDA/HIP "
           "context is not included; another GPU may pick other convolution algorithms with other workspaces";
  }
  return "address-space growth of the case on this CPU, LibTorch and allocator setting (what --memory-limit caps); "
         "tensor bytes transfer to other devices only as a lower bound (their kernels pick their own workspaces)";
}

MemoryEstimate estimate_memory(const Case& base, const std::vector<int64_t>& batches, const std::vector<int64_t>& sizes,
                               int64_t requested_batch, const std::function<Record(const Case&)>& run_one) {
  MemoryEstimate out;
  std::vector<int64_t> measured, tensor_peaks, footprints;
  size_t carrier = 0;
  for (int64_t b : batches) {
    Case c = base;
    c.batch = b;
    Record r = run_one(c);
    out.tries.push_back(r);
    if (r.status != Status::ok || !r.memory) {
      out.failure = "batch " + std::to_string(b) + ": " + std::string(to_string(r.status)) +
                    (r.error.empty() ? (r.memory ? "" : " (no memory measured)") : " (" + r.error + ")");
      return out;
    }
    measured.push_back(b);
    tensor_peaks.push_back(r.memory->peak_bytes);
    footprints.push_back(r.memory->footprint_peak_bytes);
    if (b >= out.tries[carrier].batch_size) carrier = out.tries.size() - 1;
  }
  const MemoryFit tensors = memory::fit_memory(measured, tensor_peaks, "tensors");
  const MemoryFit footprint = memory::fit_memory(measured, footprints, base.device.is_gpu() ? "reserved" : "address space");
  MemoryInfo& m = *out.tries[carrier].memory;
  m.fixed_bytes = static_cast<int64_t>(std::llround(tensors.fixed_bytes));
  m.activations_bytes_per_sample = tensors.per_sample_bytes;
  m.fit = footprint;
  m.requested_batch = std::max<int64_t>(0, requested_batch);
  for (int64_t size : sizes) {
    m.predictions.push_back(memory::predict(footprint, size, requested_batch > 0 ? std::optional<int64_t>(requested_batch)
                                                                                 : std::nullopt));
  }
  m.assumptions = prediction_assumptions(base.device);
  out.summary = out.tries[carrier];
  out.fitted = true;
  return out;
}

}  // namespace trainbench
