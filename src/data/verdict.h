// The Record's `data` object from the loader's counters and the sampler's per-step times and waits,
// and the verdict: does the input keep up with the model? (docs/methodology.md, "Real data")
#pragma once
#include <vector>

#include "data/loader_stats.h"
#include "results/record.h"

namespace trainbench::data {

// A case is input-bound when its steps spent at least this share of their time waiting for a batch.
constexpr double kInputBoundWaitShare = 0.05;

// `step_s`, `wait_s` and `copy_s`: the kept steps' times, data waits and copy waits (both inside the
// step's time; copy_s empty: none).
DataInfo make_data_info(const LoaderStats& s, const std::vector<double>& step_s, const std::vector<double>& wait_s,
                        int64_t samples_per_step, const std::vector<double>& copy_s = {});

}  // namespace trainbench::data
