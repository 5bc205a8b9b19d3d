#include "run/settings.h"

#include <fmt/format.h>

#include "core/subprocess.h"
#include "core/value_rules.h"
#include "workloads/script.h"

namespace trainbench {

ChildSettings MeasureOptions::resolve() const {
  ChildSettings s;
  s.measure = stop;
  s.memory_limit_bytes = memory_limit.empty() ? 0 : parse_size(memory_limit, "memory limit");
  s.memory_limit_on_gpu = !memory_limit_cpu_only;
  s.tune_allocator = !system_allocator;
  s.max_image_pixels = max_image_pixels;
  s.tf32 = tf32 == "on";
  s.default_threads = auto_threads;
  return s;
}

std::vector<std::string> MeasureOptions::child_args() const {
  std::vector<std::string> a;
  for (const StopSetting& s : stop_settings()) {
    if (s.sent != nullptr && !s.sent(stop)) continue;
    a.push_back(stop_flag(s));
    a.push_back(stop_value_text(s, stop));
  }
  if (!memory_limit.empty()) {
    a.push_back("--memory-limit");
    a.push_back(memory_limit);
    if (memory_limit_cpu_only) a.push_back("--memory-limit-cpu-only");
  }
  if (max_image_pixels > 0) {
    a.push_back("--max-image-pixels");
    a.push_back(std::to_string(max_image_pixels));
  }
  // Always named: the child's own default heap is not the parent's (memory's is glibc's, run-case's tuned).
  a.push_back("--allocator");
  a.push_back(system_allocator ? "system" : "tuned");
  a.push_back("--tf32");
  a.push_back(tf32);
  if (auto_threads > 0) {
    a.push_back("--auto-threads");
    a.push_back(std::to_string(auto_threads));
  }
  return a;
}

CaseChild MeasureOptions::case_child(const std::vector<std::string>& more) const {
  CaseChild c;
  c.flags = child_args();
  c.flags.insert(c.flags.end(), more.begin(), more.end());
  c.timeout_s = timeout_s;
  c.memory_limit_bytes = memory_limit.empty() ? 0 : parse_size(memory_limit, "memory limit");
  c.memory_limit_cpu_only = memory_limit_cpu_only;
  return c;
}

void MeasureOptions::place_script_check() const {
  ScriptCheckPlace place;
  place.kind = ScriptCheckPlace::Kind::child_process;
  place.executable = self_executable();
  place.timeout_s = timeout_s;
  place.memory_limit = memory_limit;
  set_script_check_place(place);
}

std::vector<std::string> DistOptions::child_args(size_t case_index) const {
  return {"--dist",
          "--dist-backend",
          backend,
          "--dist-timeout",
          fmt::format("{}", timeout_s),
          "--bucket-mb",
          fmt::format("{}", bucket_mb),
          "--dist-key",
          std::to_string(case_index)};
}

}  // namespace trainbench
