// Where a training step's memory goes (src/memory measures it; docs/memory.md explains it): plain data
// carried by a Record as its `memory` object. Bytes are exact tensor bytes from the allocator (the
// counting CPU allocator, or the GPU caching allocator's "allocated"), except max_rss_bytes and
// footprint_peak_bytes, which are what the operating system or the device runtime sees.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace trainbench {

// peak(b) = fixed + per_sample x b, fitted to measurements at two or three batches (each its own case).
struct MemoryFit {
  std::string basis;              // what `peaks` are: "address space" (CPU) | "reserved" (GPU) | "tensors"
  std::vector<int64_t> batches;   // the measured batches, ascending
  std::vector<int64_t> peaks;     // the measured peak bytes at each batch (same basis)
  double fixed_bytes = 0.0;       // intercept
  double per_sample_bytes = 0.0;  // slope
  // With three or more points: the largest |measured - fitted| over the measured peaks, as a fraction
  // of the measured peak. NaN with two points (a line through two points checks nothing).
  double linearity_error = std::numeric_limits<double>::quiet_NaN();
  bool linear = true;  // linearity_error within the tolerance (or not checkable)
  // Batches tried while measuring that are not on the line, ascending: those that ran out of memory
  // (a small limit: the line then stands on smaller batches), and those measured but set aside because
  // their peak was batch-independent (memory/fit.h, flat_until). Empty in files written before them.
  std::vector<int64_t> oom_batches;
  std::vector<int64_t> set_aside_batches;
};

// The predicted largest batch for one memory size.
struct MemoryPrediction {
  int64_t size_bytes = 0;
  int64_t largest_batch = 0;           // 0: not even one sample fits
  std::optional<bool> requested_fits;  // does the requested batch fit (null: no batch was requested)
  int64_t margin_bytes = 0;            // size - predicted peak at the requested batch (negative: short by)
  // A size beyond the largest measured batch: an interval that holds the answer under the assumptions
  // the record states (docs/memory.md, "Beyond the measured batches"); largest_batch, on the fitted
  // line, is its most likely value. Both 0 when the size lies within the measured batches.
  int64_t largest_batch_low = 0;
  int64_t largest_batch_high = 0;
  // A size this machine holds, tried under it as a memory limit (`memory` without --memory-limit,
  // docs/memory.md "Tried under the size"): the largest batch that trained under it and the smallest
  // that ran out of memory (0: none did, the search reached its cap). largest_batch is then the batch
  // that trained, largest_batch_low and _high the interval the tries leave (high: out_of_memory_batch
  // - 1), and line_batch what the fitted line had predicted. All 0 when the size was not tried.
  int64_t trained_under_limit = 0;
  int64_t out_of_memory_under_limit = 0;
  int64_t line_batch = 0;
};

// A CPU run's prediction for a CUDA card it did not run on (docs/memory.md, "A GPU you do not have"):
// the card's memory less what lies outside the caching allocator (context_bytes), filled by the
// allocator's reserved bytes at reserved_per_tensor_byte times the CPU's exact tensor line.
struct GpuTargetPrediction {
  int64_t size_bytes = 0;          // the card's memory, as its driver reports it
  int64_t largest_batch = 0;       // at reserved_per_tensor_byte: the most likely value
  int64_t largest_batch_low = 0;   // at reserved_per_tensor_byte_max
  int64_t largest_batch_high = 0;  // the tensors alone, nothing reserved beyond them
};

struct GpuTarget {
  int64_t context_bytes = 0;                // the runtime's context and the libraries' handles
  double reserved_per_tensor_byte = 0.0;    // reserved bytes per CPU tensor byte, most likely
  double reserved_per_tensor_byte_max = 0.0;  // ... at most (the interval's lower end)
  std::vector<GpuTargetPrediction> predictions;  // one per --fits size
  std::string assumptions;
};

struct MemoryInfo {
  std::string source;            // counting allocator | cuda caching allocator | none
  int64_t parameters_bytes = 0;  // parameters and buffers, after building the model
  int64_t inputs_bytes = 0;      // the synthetic batch (and anything else the build left live)
  // What the first step's forward left live above the built model (the activations its backward needs,
  // the loss): it grows with the batch even where the peak does not yet (memory/fit.h). 0: not measured.
  int64_t forward_live_bytes = 0;
  int64_t gradients_bytes = 0;  // after the first backward: what it left live (the gradients, the loss)
  int64_t optimizer_bytes = 0;  // after the first optimizer step: what it left live (its state)
  // Data-parallel cases (run --dist): the gradient all-reduce's buckets, every gradient once more,
  // flattened; allocated before the first step, counted in fixed_bytes and not in gradients_bytes.
  int64_t comm_buffer_bytes = 0;
  // Bytes per sample of the peak above the fixed bytes. One run: (peak - fixed) / batch, the synthetic
  // batch included; a `memory` run with a fit: the fit's slope over tensor peaks.
  double activations_bytes_per_sample = 0.0;
  int64_t fixed_bytes =
      0;  // batch-independent: parameters + gradients + optimizer + comm buffers (one run); the fit's intercept
  int64_t peak_bytes = 0;     // tensor bytes at the peak of the whole case (warm-up and measured steps)
  int64_t max_rss_bytes = 0;  // CPU: the process's max resident set (libraries, heap slack included); GPU: 0
  // What a memory limit sees beyond the case's start: CPU address-space growth (RLIMIT_AS counts it)
  // less the loader's (loader_address_space_bytes), GPU peak reserved bytes of the caching allocator.
  // 0: not read.
  int64_t footprint_peak_bytes = 0;
  // CPU: the loader's own address space, left out of footprint_peak_bytes: what its threads (stacks,
  // malloc arenas) and its full prefetch queue took when it started. A --memory-limit is raised by it,
  // as a GPU case keeps the loader in host memory, never on the card. 0: no loader, or a GPU case.
  int64_t loader_address_space_bytes = 0;
  // CPU: the loader's tensor bytes at their peak (its queue and the batches in the making), counted
  // apart from the model's: peak_bytes and the phases hold a batch only once the model has taken it.
  int64_t loader_peak_bytes = 0;
  std::optional<MemoryFit> fit;               // `memory` runs: the fit over the measured batches
  std::vector<MemoryPrediction> predictions;  // `memory` runs: one per --fits size
  std::optional<GpuTarget> gpu_target;        // `memory` runs of a CPU case: the same sizes as CUDA cards
  int64_t requested_batch = 0;                // the batch the predictions' requested_fits is about (0: none)
  std::string assumptions;                    // how far the predictions carry (docs/memory.md)
};

nlohmann::json memory_to_json(const MemoryInfo& m);
// Throws std::runtime_error naming the bad field ("memory.peak_bytes: ...").
MemoryInfo memory_from_json(const nlohmann::json& j);

}  // namespace trainbench
