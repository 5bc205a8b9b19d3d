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

namespace {

// "8" or "2, 1", in the order given.
std::string numbers(const std::vector<int64_t>& batches) {
  std::string s;
  for (size_t i = 0; i < batches.size(); ++i) s += (i ? ", " : "") + std::to_string(batches[i]);
  return s;
}

// "batch 8" or "batches 2, 1".
std::string batch_list(const std::vector<int64_t>& batches) {
  return (batches.size() == 1 ? "batch " : "batches ") + numbers(batches);
}

}  // namespace

MemoryEstimate estimate_memory(const Case& base, const std::vector<int64_t>& batches, const std::vector<int64_t>& sizes,
                               int64_t requested_batch, const std::function<Record(const Case&)>& run_one) {
  MemoryEstimate out;
  std::vector<int64_t> measured, tensor_peaks, footprints, forward_live, oom;
  std::vector<int64_t> asked = batches;
  std::vector<int64_t> hidden;  // measured batches whose peak the activations did not reach (flat_until)
  size_t carrier = 0;
  // The batches asked for, smallest first, until one runs out of memory; then batches below the
  // smallest that did (halving while none has trained, bisecting above the largest that has) until as
  // many points as asked for trained or no untried batch is left between the two.
  size_t wanted = asked.size();
  size_t next = 0;
  while (measured.size() < wanted) {
    int64_t b = 0;
    if (next < asked.size() && (oom.empty() || asked[next] < oom.back())) {
      b = asked[next++];
    } else if (!oom.empty()) {
      const int64_t lo = measured.empty() ? 0 : measured.back();
      b = lo + (oom.back() - lo) / 2;
      if (b <= lo) break;
    } else {
      break;
    }
    Case c = base;
    c.batch = b;
    Record r = run_one(c);
    out.tries.push_back(r);
    if (r.status == Status::oom) {
      oom.push_back(b);  // each one smaller than the last: only batches below it are tried from here
      continue;
    }
    if (r.status != Status::ok || !r.memory) {
      out.failure = "batch " + std::to_string(b) + ": " + std::string(to_string(r.status)) +
                    (r.error.empty() ? (r.memory ? "" : " (no memory measured)") : " (" + r.error + ")");
      return out;
    }
    measured.push_back(b);
    tensor_peaks.push_back(r.memory->peak_bytes);
    footprints.push_back(r.memory->footprint_peak_bytes);
    forward_live.push_back(r.memory->forward_live_bytes);
    carrier = out.tries.size() - 1;  // batches that train come in ascending order: the last is the largest
    // All asked for measured, and the peak hidden below a batch-independent one: measure two batches
    // where the activations make the peak, once.
    if (measured.size() == wanted && hidden.empty() && oom.empty()) {
      const int64_t from = memory::flat_until(measured, tensor_peaks, forward_live);
      if (from > 0) {
        hidden = measured;
        asked.push_back(from);
        asked.push_back(2 * from);
        wanted += 2;
      }
    }
  }
  if (measured.size() < 2) {
    out.failure = measured.empty() ? "not even batch 1 trains (" + batch_list(oom) + " ran out of memory)"
                                   : "only batch " + std::to_string(measured.front()) + " trains (" + batch_list(oom) +
                                         " ran out of memory); a fit needs two batches";
    return out;
  }
  // With batches whose peak was hidden, the line stands on the others when two of them trained.
  std::vector<int64_t> fit_batches, fit_tensors, fit_footprints;
  for (size_t i = 0; i < measured.size(); ++i) {
    if (std::find(hidden.begin(), hidden.end(), measured[i]) != hidden.end()) continue;
    fit_batches.push_back(measured[i]);
    fit_tensors.push_back(tensor_peaks[i]);
    fit_footprints.push_back(footprints[i]);
  }
  const bool hidden_only = fit_batches.size() < 2;  // the larger batches did not train: fit on the hidden ones
  if (hidden_only) {
    fit_batches = measured;
    fit_tensors = tensor_peaks;
    fit_footprints = footprints;
  }
  const MemoryFit tensors = memory::fit_memory(fit_batches, fit_tensors, "tensors");
  MemoryFit footprint =
      memory::fit_memory(fit_batches, fit_footprints, base.device.is_gpu() ? "reserved" : "address space");
  // Every tensor byte lives in the footprint, so the footprint cannot grow slower than the tensors for
  // long. Between nearby batches it can: the heap (CPU, 64 MiB top pad) and the caching allocator (GPU
  // segments) grow in steps, and a step that covers both batches gives a slope near 0 and a prediction
  // at the batch cap. The slope is then the tensors', through the largest batch's footprint.
  const bool stepped = footprint.per_sample_bytes < tensors.per_sample_bytes;
  if (stepped) {
    footprint.per_sample_bytes = tensors.per_sample_bytes;
    footprint.fixed_bytes = static_cast<double>(footprint.peaks.back()) -
                            tensors.per_sample_bytes * static_cast<double>(footprint.batches.back());
  }
  MemoryInfo& m = *out.tries[carrier].memory;
  m.fixed_bytes = static_cast<int64_t>(std::llround(tensors.fixed_bytes));
  m.activations_bytes_per_sample = tensors.per_sample_bytes;
  m.fit = footprint;
  std::sort(oom.begin(), oom.end());
  out.oom_batches = oom;
  m.requested_batch = std::max<int64_t>(0, requested_batch);
  for (int64_t size : sizes) {
    m.predictions.push_back(
        memory::predict(footprint, size, requested_batch > 0 ? std::optional<int64_t>(requested_batch) : std::nullopt));
  }
  m.assumptions = prediction_assumptions(base.device);
  if (stepped) {
    m.assumptions +=
        "; the footprint grew slower than the tensors between the measured batches (it grows in "
        "steps), so its slope is the tensors' through the largest batch: a lower bound, the predicted "
        "batches an upper bound";
  }
  if (!hidden.empty()) {
    m.assumptions += "; at batches " + numbers(hidden) +
                     " the peak was batch-independent (the forward's live bytes "
                     "grew faster than it: the activations had not yet reached it), so " +
                     (hidden_only ? std::string("the line through them is too flat (the larger batches measured after "
                                                "them did not train): the predicted batches are an upper bound")
                                  : "the line stands on the larger batches measured after them");
  }
  if (!oom.empty()) {
    // Fewer or smaller points than asked for: the line may be steeper or flatter than at the batches
    // asked for, and with two points its linearity is unchecked.
    m.assumptions += "; fitted on batches " + numbers(measured) + " because " + batch_list(oom) +
                     " ran out of memory while measuring";
  }
  out.summary = out.tries[carrier];
  out.fitted = true;
  return out;
}

}  // namespace trainbench
