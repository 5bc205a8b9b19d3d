// A run's Context as it starts: the system's facts (core/sysinfo, which asks LibTorch, CUDA and /proc)
// with this build's version and revision and the time now. Kept out of results/, which stores and
// reads contexts without loading LibTorch.
#pragma once
#include <string>

#include "results/context.h"

namespace trainbench {

// `threads` and `device` are recorded as given.
Context collect_context(int threads, const std::string& device);

}  // namespace trainbench
