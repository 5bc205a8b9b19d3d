// Context: where and with what a run happened (machine, OS, LibTorch build, BLAS, threads, device).
// The facts themselves come from core/sysinfo; this file stores them and writes and reads them.
// Collected once per run by the parent; written as the "context" object of a results file and as the
// journal header, so a resumed run keeps the context of its first start.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/sysinfo.h"
#include "results/op_record.h"

namespace trainbench {

// The system's facts (core/sysinfo.h) plus what this run was: trainbench's version, when, the threads
// and device it ran with, the measured peak and the run's settings.
struct Context : SystemInfo {
  std::string trainbench_version;
  std::string git_revision;
  std::string start_time;  // ISO 8601 UTC, e.g. 2024-05-01T12:34:56Z
  int threads = 0;
  std::string device;                       // cpu | cuda:0
  std::string cpu_allocator = "tuned";      // tuned (freed memory kept in the heap) | system (glibc as is)
  std::optional<PeakInfo> peak;             // the device's ceilings from `trainbench peak`, when measured
  int world_size = 1;                       // processes of a data-parallel run (`run --dist`); 1 otherwise
  std::optional<std::string> dist_backend;  // gloo | nccl for a data-parallel run; null otherwise
  // A data-parallel run's launcher (dist/env.h: "trainbench launch", "torchrun", "srun", ...) and its
  // node count (world size / ranks per node); null and 1 otherwise, and in files written before them.
  std::optional<std::string> dist_launcher;
  int dist_nodes = 1;
  // `run --resume --force` with a journal of a different plan: what differed (the older records were kept
  // as they were). Null otherwise, and in files written before it existed.
  std::optional<std::string> resume_note;
};

// The current time as ISO 8601 UTC, e.g. 2024-05-01T12:34:56Z.
std::string iso8601_utc_now();

nlohmann::json to_json(const Context& c);
// Throws std::runtime_error naming the missing or mistyped field.
Context context_from_json(const nlohmann::json& j);
// Throws std::runtime_error naming the first field whose value its rule refuses (a start time that is
// no time, a host name a terminal or page would not show as it is, a device of no known kind):
// context_from_json's check, for a context made in memory (a store's add).
void check_context(const Context& c);

void to_json(nlohmann::json& j, const Context& c);
void from_json(const nlohmann::json& j, Context& c);

}  // namespace trainbench
