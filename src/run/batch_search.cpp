#include "run/batch_search.h"

#include <fstream>
#include <string>

#include "runner/child.h"
#include "runner/measure.h"
#include "runner/memory_estimate.h"

namespace trainbench {

int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

namespace {

// One try in its own child, told to `on_try` as it ends.
std::function<Record(const Case&)> isolated_try(const MeasureOptions& flags, bool* interrupted,
                                                const TryEnded& on_try) {
  return [interrupted, on_try, child = flags.case_child()](const Case& trial) {
    if (*interrupted) return failed_record(trial, "interrupted");
    Record r = run_case_isolated(trial, child, interrupted);
    if (on_try) on_try(trial, r);
    return r;
  };
}

}  // namespace

MaxBatchResult search_max_batch(const Case& c, const MeasureOptions& flags, int64_t start, int64_t max_batch,
                                bool* interrupted, const TryEnded& on_try) {
  return find_max_batch(c, start, max_batch, isolated_try(flags, interrupted, on_try));
}

MaxBatchResult search_max_batch_predicted(const Case& c, const MeasureOptions& flags, int64_t start, int64_t max_batch,
                                          bool* interrupted, int64_t* predicted, const TryEnded& on_try) {
  *predicted = 0;
  // Only under --memory-limit is there a known limit to predict against (a GPU case's caps its caching
  // allocator); a whole card's size minus its runtime's context is not known here.
  const int64_t limit = flags.memory_limit.empty() ? 0 : parse_size(flags.memory_limit, "memory limit");
  if (limit <= 0) return search_max_batch(c, flags, start, max_batch, interrupted, on_try);
  return find_max_batch_predicted(c, limit, start, max_batch, isolated_try(flags, interrupted, on_try), predicted);
}

int64_t default_cpu_memory_limit(const std::vector<Case>& plan, MeasureOptions& flags) {
  if (!flags.memory_limit.empty()) return 0;
  for (const auto& c : plan) {
    if (!c.device.is_gpu()) {
      const int64_t avail = available_memory_bytes() * 9 / 10;
      if (avail > 0) {
        flags.memory_limit = std::to_string(avail);
        flags.memory_limit_cpu_only = true;
      }
      return avail > 0 ? avail : 0;
    }
  }
  return 0;
}

}  // namespace trainbench
