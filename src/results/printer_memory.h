// The `memory` subcommand's report: per case, where the bytes go and the predicted largest batch per
// memory size. Text only, from Records (results/memory_info.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "results/record.h"

namespace trainbench {

// The breakdown of `r.memory` (one case; "" when it has none), then, when it carries a fit, the fit
// (with the batches that ran out of memory while measuring or were set aside, from the fit itself) and
// one line per predicted size.
std::string print_memory(const Record& r);

// "the smallest batch is 3.2% off the line" (three batches) or "the smaller batches are up to 3.2% off
// the line" (more): what a fit's linearity_error says, for the printout and the report.
std::string off_the_line(const MemoryFit& f);

}  // namespace trainbench
