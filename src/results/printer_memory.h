// The `memory` subcommand's report: per case, where the bytes go and the predicted largest batch per
// memory size. Text only, from Records (results/memory_info.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "results/record.h"

namespace trainbench {

// The breakdown of `r.memory` (one case; "" when it has none), then, when it carries a fit, the fit
// and one line per predicted size. `oom_batches`: batches that ran out of memory while measuring for
// the fit (MemoryEstimate::oom_batches), said with the fit.
std::string print_memory(const Record& r, const std::vector<int64_t>& oom_batches = {});

}  // namespace trainbench
