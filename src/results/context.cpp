// The run's Context: the system's facts (core/sysinfo) with trainbench's version and the start time,
// and its JSON both ways.
#include "results/context.h"

#include <chrono>
#include <ctime>

#include <nlohmann/json.hpp>

#include "results/detail/json_fields.h"

namespace trainbench {

std::string iso8601_utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

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

nlohmann::json to_json(const Context& c) {
  auto opt = [](const auto& o) -> nlohmann::json { return o ? nlohmann::json(*o) : nlohmann::json(nullptr); };
  nlohmann::json j;
  j["trainbench_version"] = c.trainbench_version;
  j["git_revision"] = c.git_revision;
  j["start_time"] = c.start_time;
  j["hostname"] = c.hostname;
  j["os"] = c.os;
  j["cpu_model"] = c.cpu_model;
  j["cpu_cores"] = c.cpu_cores;
  j["cpu_physical_cores"] = opt(c.cpu_physical_cores);
  j["memory_bytes"] = c.memory_bytes;
  j["libtorch_version"] = c.libtorch_version;
  j["build"] = c.build;
  j["onednn_version"] = opt(c.onednn_version);
  j["cudnn_version"] = opt(c.cudnn_version);
  j["miopen_version"] = opt(c.miopen_version);
  j["blas_library"] = opt(c.blas_library);
  j["blas_kind"] = c.blas_kind;
  j["threads"] = c.threads;
  j["device"] = c.device;
  j["device_name"] = c.device_name;
  j["device_memory_bytes"] = opt(c.device_memory_bytes);
  j["cpu_allocator"] = c.cpu_allocator;
  j["peak"] = c.peak ? to_json(*c.peak) : nlohmann::json(nullptr);
  j["gpu_count"] = opt(c.gpu_count);
  j["gpu_sm_count"] = opt(c.gpu_sm_count);
  j["gpu_arch"] = opt(c.gpu_arch);
  j["gpu_driver_version"] = opt(c.gpu_driver_version);
  j["gpu_runtime_version"] = opt(c.gpu_runtime_version);
  j["world_size"] = c.world_size;
  j["dist_backend"] = opt(c.dist_backend);
  j["resume_note"] = opt(c.resume_note);
  return j;
}

Context context_from_json(const nlohmann::json& j) {
  using namespace detail;
  if (!j.is_object()) throw std::runtime_error(std::string("expected a context object, got ") + j.type_name());
  Context c;
  c.trainbench_version = get_string(j, "trainbench_version");
  c.git_revision = get_string(j, "git_revision");
  c.start_time = get_string(j, "start_time");
  c.hostname = get_string(j, "hostname");
  c.os = get_string(j, "os");
  c.cpu_model = get_string(j, "cpu_model");
  c.cpu_cores = static_cast<int>(get_int(j, "cpu_cores"));
  if (auto v = get_optional_int(j, "cpu_physical_cores")) c.cpu_physical_cores = static_cast<int>(*v);
  c.memory_bytes = get_int(j, "memory_bytes");
  c.libtorch_version = get_string(j, "libtorch_version");
  c.build = get_string(j, "build");
  c.onednn_version = get_optional_string(j, "onednn_version");
  c.cudnn_version = get_optional_string(j, "cudnn_version");
  c.miopen_version = get_optional_string(j, "miopen_version");
  c.blas_library = get_optional_string(j, "blas_library");
  c.blas_kind = get_string(j, "blas_kind");
  c.threads = static_cast<int>(get_int(j, "threads"));
  c.device = get_string(j, "device");
  c.device_name = get_string(j, "device_name");
  c.device_memory_bytes = get_optional_int(j, "device_memory_bytes");
  c.cpu_allocator = get_string(j, "cpu_allocator");
  // Files written before `trainbench peak` existed have no "peak".
  if (j.contains("peak") && !j["peak"].is_null()) c.peak = nested("peak", [&] { return peak_info_from_json(j["peak"]); });
  // Added later: older files lack them.
  if (auto v = get_optional_int_or_none(j, "gpu_count")) c.gpu_count = static_cast<int>(*v);
  if (auto v = get_optional_int_or_none(j, "gpu_sm_count")) c.gpu_sm_count = static_cast<int>(*v);
  c.gpu_arch = get_optional_string_or_none(j, "gpu_arch");
  c.gpu_driver_version = get_optional_string_or_none(j, "gpu_driver_version");
  c.gpu_runtime_version = get_optional_string_or_none(j, "gpu_runtime_version");
  // Files written before data parallelism lack these two keys: one process, no backend.
  if (j.contains("world_size")) c.world_size = static_cast<int>(get_int(j, "world_size"));
  if (j.contains("dist_backend")) c.dist_backend = get_optional_string(j, "dist_backend");
  if (j.contains("resume_note")) c.resume_note = get_optional_string(j, "resume_note");
  return c;
}

void to_json(nlohmann::json& j, const Context& c) { j = to_json(c); }
void from_json(const nlohmann::json& j, Context& c) { c = context_from_json(j); }

}  // namespace trainbench
