#include "run/case_entry.h"

#include "core/failure.h"
#include "core/value_rules.h"
#include "dist/dist_measure.h"
#include "dist/env.h"
#include "dist/process_group.h"
#include "runner/measure.h"
#include "runner/plan.h"

namespace trainbench {
namespace {

Record measure_dist(const Case& c, const ChildSettings& settings, const DistOptions& flags, const std::string& key) {
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

Record measure_in_child(const Case& c, const ChildSettings& settings, const DistOptions& dist,
                        const std::string& dist_key) {
  if (dist.enabled) return measure_dist(c, settings, dist, dist_key);
  prepare_child_process(c, settings);
  return measure_case(c, settings.measure);
}

}  // namespace trainbench
