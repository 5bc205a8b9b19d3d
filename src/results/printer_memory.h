// The `memory` subcommand's report: per case, where the bytes go and the predicted largest batch per
// memory size. Text only, from Records (results/memory_info.h).
#pragma once
#include <string>

#include "results/record.h"

namespace trainbench {

// The breakdown of `r.memory` (one case; "" when it has none), then, when it carries a fit, the fit
// and one line per predicted size.
std::string print_memory(const Record& r);

}  // namespace trainbench
