#include "runner/run_context.h"

#include "core/sysinfo.h"

namespace trainbench {

Context collect_context(int threads, const std::string& device) {
  Context c;
  static_cast<SystemInfo&>(c) = collect_system_info(device);
  c.trainbench_version = TRAINBENCH_VERSION;
  c.git_revision = TRAINBENCH_GIT_REVISION;
  c.start_time = iso8601_utc_now();
  c.threads = threads;
  c.device = device;
  return c;
}

}  // namespace trainbench
