// The measuring side of a case (runs inside the child process): build the workload, warm up,
// time steps until the stopping policy is satisfied, and return a Record. Never prints.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/failure.h"
#include "core/stopping.h"
#include "results/record.h"
#include "cases/case.h"
#include "workloads/workload.h"

namespace trainbench {

struct ChildSettings {
  MeasureSettings measure;
  int64_t memory_limit_bytes = 0;  // 0: none. Else a CPU case may grow the process by this much (RLIMIT_AS),
                                   // a GPU case's caching allocator reserve this much on the card
  bool memory_limit_on_gpu = true;  // false: the limit stands for a CPU's memory (a suite's): GPU cases run free
  bool tune_allocator = true;      // keep freed memory in the heap between steps (see docs/methodology.md)
  bool tf32 = false;               // GPU: let cuBLAS and cuDNN use TF32 for fp32 (--tf32 on)
  int default_threads = 0;         // what threads 0 means (> 0: data-parallel workers share the cores)
  int64_t max_image_pixels = 0;    // the image loader's pixel limit (0: data::kMaxImagePixels)
};

// Prepares this process for measuring: allocator tuning, threads, warm thread pools, memory limit,
// GPU math settings (algorithm search, TF32).
// Returns the intra-op thread count in effect.
int prepare_child_process(const Case& c, const ChildSettings& s);

// Measures `c`. Failures are values: out-of-memory gives Status::oom, anything else Status::error,
// each with a one-line reason.
Record measure_case(const Case& c, const MeasureSettings& m);
// measure_case with the workload built by `build` (tests inject workloads that fail in given ways).
Record measure_workload(const Case& c, const MeasureSettings& m,
                        const std::function<std::unique_ptr<Workload>()>& build);

// A Record with the case's fields filled in and nothing measured yet (status error until set).
Record case_record(const Case& c);

struct SampledSteps;

// The one filling of a Record from its workload, for a single process and for a data-parallel rank
// alike. `ranks`: how many copies of the workload the figures stand for (a data-parallel rank 0
// reports the whole job; 1 otherwise).
// Before measuring (so a case that fails later still names its model's size): what the workload says
// of itself (parameters, unit, FLOPs per step) and the device's math modes.
void fill_workload_facts(Record& r, const Workload& w, const DeviceSpec& device, double ranks = 1.0);
// After measuring: the loss scaler's skipped steps since `skipped_before` and its scale, the timing
// of `steps` (the step times the figures stand for: this process's, or the slowest rank's), the input
// pipeline's figures from this process's own steps, and throughput, tokens/s and achieved FLOP/s.
void fill_measured(Record& r, const Workload& w, const SampledSteps& sampled, const std::vector<double>& steps,
                   const MeasureSettings& m, int64_t skipped_before, double ranks = 1.0);

// The Record of a case that produced none: status error with `why`.
Record failed_record(const Case& c, const std::string& why);

}  // namespace trainbench
