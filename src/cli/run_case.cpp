// `trainbench run-case DESCRIPTOR`: the child side of the runner. Parses its flags, measures one case in
// this process (run/case_entry.h) and writes its Record as JSON to the result descriptor (fd 3).
// Failures are values in the Record.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "results/results_file.h"
#include "run/case_entry.h"

namespace trainbench::cli {

int cmd_run_case(const RunCaseOptions& o) {
  const Case c = child_case(o.descriptor);
  const Record r = measure_in_child(c, o.measure.resolve(), o.dist, o.dist_key);
  const std::string text = to_json(r).dump() + "\n";
  return detail::write_all_and_sync(o.result_fd, text) ? kExitOk : kExitFailure;
}

}  // namespace trainbench::cli
