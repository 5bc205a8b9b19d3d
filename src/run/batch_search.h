// The batch search of `run --batch auto` and `maxbatch`: each try of a batch in its own case child.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "cases/case.h"
#include "results/record.h"
#include "run/settings.h"
#include "runner/maxbatch.h"

namespace trainbench {

// Told as each try of a batch ends (the command shows a line per try).
using TryEnded = std::function<void(const Case& trial, const Record& r)>;

// The batch search for `c`, each try isolated under `measure`.
MaxBatchResult search_max_batch(const Case& c, const MeasureOptions& measure, int64_t start, int64_t max_batch,
                                bool* interrupted, const TryEnded& on_try);
// search_max_batch after a memory prediction (CPU cases under a memory limit; others search as
// before): two small batches fitted, then a narrow search around the predicted batch (*predicted;
// 0 when none was made). Every try, the fitted ones first, is in the result.
MaxBatchResult search_max_batch_predicted(const Case& c, const MeasureOptions& measure, int64_t start,
                                          int64_t max_batch, bool* interrupted, int64_t* predicted,
                                          const TryEnded& on_try);

// The memory available on this machine now (/proc/meminfo's MemAvailable), 0 when unknown.
int64_t available_memory_bytes();

// A CPU batch search without a memory limit would grow until the kernel's OOM killer ends it: when
// `plan` has a CPU case and `measure` no limit, limits CPU cases to 90% of the memory available now.
// Returns the limit set (bytes), 0 when none was.
int64_t default_cpu_memory_limit(const std::vector<Case>& plan, MeasureOptions& measure);

}  // namespace trainbench
