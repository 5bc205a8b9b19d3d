// `trainbench run-case DESCRIPTOR`: the child side of the runner. Parses its flags, measures one case in
// this process (run/case_entry.h) and writes its Record as JSON to the result descriptor (fd 3).
// Failures are values in the Record.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "workloads/script.h"
#include "cli/options.h"
#include "results/results_file.h"
#include "run/case_entry.h"

namespace trainbench::cli {

// Hidden `run-case DESCRIPTOR`: the child side of the runner.
struct RunCaseOptions {
  std::string descriptor;
  int result_fd = 3;
  MeasureFlags measure;
  DistFlags dist;
  std::string dist_key = "0";  // the case's key in rank 0's store
};

int cmd_run_case(const RunCaseOptions& o) {
  const Case c = child_case(o.descriptor);
  const Record r = measure_in_child(c, o.measure.resolve(), o.dist, o.dist_key);
  const std::string text = to_json(r).dump() + "\n";
  return detail::write_all_and_sync(o.result_fd, text) ? kExitOk : kExitFailure;
}

Command add_run_case(CLI::App& app) {
  auto o = std::make_shared<RunCaseOptions>();
  CLI::App* sub = app.add_subcommand("run-case", "Internal: measure one case in this process");
  sub->group("");  // hidden from --help
  sub->add_option("descriptor", o->descriptor)->required();
  add_result_fd(*sub, o->result_fd);
  o->measure.add_to(*sub);
  o->dist.add_to(*sub);
  sub->add_option("--dist-key", o->dist_key);
  return {sub, [o] {
            ScriptCheckPlace place;  // this process is the case's own: it checks a TorchScript file as it builds it
            place.kind = ScriptCheckPlace::Kind::case_setup;
            set_script_check_place(place);
            return cmd_run_case(*o);
          }};
}

}  // namespace trainbench::cli
