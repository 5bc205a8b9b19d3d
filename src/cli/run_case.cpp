// `trainbench run-case DESCRIPTOR`: the child side of the runner. Measures one case in this process
// and writes its Record as JSON to the result descriptor (fd 3). Failures are values in the Record.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "results/results_file.h"
#include "runner/plan.h"

namespace trainbench::cli {

int cmd_run_case(const std::string& descriptor, const MeasureFlags& flags, int result_fd) {
  Case c;
  try {
    c = parse_case(descriptor);
  } catch (const DescriptorError& e) {
    throw InputError(e.what());
  }
  validate_case(c);
  const ChildSettings settings = flags.resolve();
  prepare_child_process(c, settings);
  const Record r = measure_case(c, settings.measure);
  const std::string text = to_json(r).dump() + "\n";
  return detail::write_all_and_sync(result_fd, text) ? kExitOk : kExitFailure;
}

}  // namespace trainbench::cli
