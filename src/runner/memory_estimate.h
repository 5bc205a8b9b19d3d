// Predicting memory from measurements: run a case at two or three small batches (each a whole case,
// in its own child when run by the CLI), fit peak(b) = fixed + per_sample x b (memory/fit.h) and
// predict the largest batch for each memory size. Returns data only.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "results/record.h"
#include "runner/case.h"

namespace trainbench {

struct MemoryEstimate {
  std::vector<Record>
      tries;            // every batch tried, in order (out-of-memory ones too); the largest ok one carries the fit
  std::string failure;  // non-empty when there is no fit: a try failed, or fewer than two batches trained
  bool fitted = false;
  Record summary;  // == the try that carries the fit (valid when fitted)
  // Batches that ran out of memory while measuring (a small limit), ascending: the fit then stands on
  // smaller batches, perhaps fewer than asked for. The record's memory.assumptions says so too.
  std::vector<int64_t> oom_batches;
};

// Measures `base` at each of `batches` (ascending) with `run_one`. A batch that runs out of memory
// (a small --memory-limit) is replaced by smaller ones: halving while none has trained, then bisecting
// between the largest that trained and the smallest that did not, until as many batches as asked for
// trained or none is left to try; the fit then stands on the batches that trained (at least two;
// oom_batches lists the others). Any other failure stops it. The peak is fitted against
// the batch on two bases: the exact tensor bytes (memory.fixed_bytes and
// memory.activations_bytes_per_sample) and the footprint a limit sees (memory.fit, from which the
// predictions for `sizes` come). `requested_batch` > 0: each prediction says whether it fits.
MemoryEstimate estimate_memory(const Case& base, const std::vector<int64_t>& batches, const std::vector<int64_t>& sizes,
                               int64_t requested_batch, const std::function<Record(const Case&)>& run_one);

// What the predictions assume, stored with them (docs/memory.md).
std::string prediction_assumptions(const DeviceSpec& device);

}  // namespace trainbench
