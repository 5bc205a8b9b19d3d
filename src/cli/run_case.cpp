// `trainbench run-case DESCRIPTOR`: the child side of the runner. Measures one case in this process
// and writes its Record as JSON to the result descriptor (fd 3). Failures are values in the Record.
// With --dist this process is one rank of the case: it joins the case's process group through the
// store of rank 0's `run` (key prefix per case) and measures data-parallel.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "dist/dist_measure.h"
#include "dist/env.h"
#include "dist/process_group.h"
#include "results/results_file.h"
#include "runner/plan.h"

namespace trainbench::cli {
namespace {

Record measure_dist(const Case& c, const ChildSettings& settings, const DistFlags& flags, const std::string& key) {
  const dist::DistEnv e = dist::dist_env_from_process();
  const std::string backend = dist::resolve_backend(flags.backend, c.device.is_gpu());
  dist::CommPtr comm;
  try {
    dist::StorePtr store = dist::connect_store(e, false, flags.timeout_s);
    comm = dist::make_comm(dist::prefixed("trainbench/case/" + key + "/pg/", store), e, backend, flags.timeout_s);
  } catch (...) {
    return failed_record(c, "process group (" + backend + "): " + current_failure().line);
  }
  prepare_child_process(c, settings);
  return dist::measure_dist_case(c, settings.measure, comm, e, backend, flags.bucket_bytes());
}

}  // namespace

Case child_case(const std::string& descriptor) {
  Case c;
  try {
    c = parse_case(descriptor);
  } catch (const DescriptorError& e) {
    throw InputError(e.what());
  }
  validate_case(c);
  return c;
}

int cmd_run_case(const RunCaseOptions& o) {
  const Case c = child_case(o.descriptor);
  const ChildSettings settings = o.measure.resolve();
  Record r;
  if (o.dist.enabled) {
    r = measure_dist(c, settings, o.dist, o.dist_key);
  } else {
    prepare_child_process(c, settings);
    r = measure_case(c, settings.measure);
  }
  const std::string text = to_json(r).dump() + "\n";
  return detail::write_all_and_sync(o.result_fd, text) ? kExitOk : kExitFailure;
}

}  // namespace trainbench::cli
