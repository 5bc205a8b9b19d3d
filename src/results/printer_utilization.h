// MFU and HFU under the console and markdown tables: language-model cases have them, most rows do not,
// so they are a line each rather than a column of dashes (docs/methodology.md, "MFU").
#pragma once
#include <string>
#include <vector>

#include "results/record.h"

namespace trainbench {

// One line (ending in '\n') per ok record with an MFU: its MFU and, where defined, HFU, as percentages;
// "" when no record has one (printer_cells.cpp).
std::string utilization_footer(const std::vector<Record>& records);

}  // namespace trainbench
