// JSON output: the results file itself, exactly as write_results_atomic writes it.
#include "results/printer.h"

namespace trainbench {

std::string print_json(const ResultsFile& file) { return results_to_string(file); }

}  // namespace trainbench
