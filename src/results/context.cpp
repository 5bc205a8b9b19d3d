// The run's Context and its JSON both ways through one field table (runner/run_context.h fills it in:
// the system's facts need LibTorch, which results/ does not load).
#include "results/context.h"

#include <chrono>
#include <ctime>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/device_text.h"
#include "core/value_rules.h"
#include "results/fields.h"

namespace trainbench {

using detail::Field;
using detail::Since;

std::string iso8601_utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

template <class M, class B>
Field<Context> field(const char* key, M B::*member, Since since = Since::always) {
  return detail::member_field<Context>(key, member, since);
}

nlohmann::json peak_to_json(const PeakInfo& p) { return to_json(p); }

}  // namespace

const std::vector<Field<Context>>& context_fields() {
  using C = Context;
  static const std::vector<Field<C>> fields = {
      field("trainbench_version", &C::trainbench_version),
      field("git_revision", &C::git_revision),
      field("start_time", &C::start_time).checked_text(&start_time_problem, &C::start_time),
      field("hostname", &C::hostname).checked_text(&host_name_problem, &C::hostname),
      field("os", &C::os),
      field("cpu_model", &C::cpu_model),
      field("cpu_cores", &C::cpu_cores),
      field("cpu_physical_cores", &C::cpu_physical_cores),
      field("memory_bytes", &C::memory_bytes),
      field("libtorch_version", &C::libtorch_version),
      field("build", &C::build),
      field("onednn_version", &C::onednn_version),
      field("cudnn_version", &C::cudnn_version),
      field("miopen_version", &C::miopen_version),
      field("blas_library", &C::blas_library),
      field("blas_kind", &C::blas_kind),
      field("threads", &C::threads),
      field("device", &C::device).checked_text(&recorded_devices_problem, &C::device),
      field("device_name", &C::device_name),
      field("device_memory_bytes", &C::device_memory_bytes),
      field("cpu_allocator", &C::cpu_allocator),
      // Files written before `trainbench peak` existed have no "peak".
      detail::optional_object<C>("peak", &C::peak, &peak_to_json, &peak_info_from_json),
      // Added later: older files lack them (GPU facts, and data parallelism: one process, no backend).
      field("gpu_count", &C::gpu_count, Since::later),
      field("gpu_sm_count", &C::gpu_sm_count, Since::later),
      field("gpu_arch", &C::gpu_arch, Since::later),
      field("gpu_driver_version", &C::gpu_driver_version, Since::later),
      field("gpu_runtime_version", &C::gpu_runtime_version, Since::later),
      field("world_size", &C::world_size, Since::later),
      field("dist_backend", &C::dist_backend, Since::later),
      field("dist_launcher", &C::dist_launcher, Since::later),
      field("dist_nodes", &C::dist_nodes, Since::later),
      field("resume_note", &C::resume_note, Since::later),
      field("cuda_build_version", &C::cuda_build_version, Since::later),
      field("nccl_version", &C::nccl_version, Since::later),
  };
  return fields;
}

nlohmann::json to_json(const Context& c) { return detail::write_fields(context_fields(), c); }

Context context_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::runtime_error(std::string("expected a context object, got ") + j.type_name());
  Context c = detail::read_fields(context_fields(), j);
  check_context(c);
  return c;
}

void check_context(const Context& c) { detail::check_fields(context_fields(), c); }

void to_json(nlohmann::json& j, const Context& c) { j = to_json(c); }
void from_json(const nlohmann::json& j, Context& c) { c = context_from_json(j); }

}  // namespace trainbench
