// Printers for the layer-level results: `op` tables, the `peak` summary and the `explain` breakdown.
#pragma once
#include <string>
#include <vector>

#include "results/op_record.h"

namespace trainbench {

// One row per phase of each op; `peak` (may be null) adds a % of peak column.
std::string print_op_table(const std::vector<OpRecord>& ops, const PeakInfo* peak);
std::string print_peak(const PeakInfo& p);
// The step, the layers sorted by time and the findings.
std::string print_explanation(const Explanation& e);

}  // namespace trainbench
