// A run's settings as values: how each case is measured and, with --dist, how its ranks meet. The
// command line declares their flags (cli/options.h: MeasureFlags, DistFlags, which derive from these);
// a case's child gets them as its arguments and parses them once.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/stopping.h"
#include "runner/child.h"
#include "runner/measure.h"

namespace trainbench {

// Every case child is killed after this long unless --timeout says otherwise (0: never).
constexpr double kDefaultCaseTimeoutS = 900.0;

// The measurement settings: the stopping settings (core/stopping.h: warmup, min/max steps, min/max time,
// max noise, each declared there with its rule), the timeout, the memory limit, the CPU heap, TF32. The
// stopping settings' defaults are MeasureSettings', the one place they are written. cli/'s MeasureFlags
// declares their flags; a case's child gets them back as its arguments (child_args), parsed once there.
struct MeasureOptions {
  MeasureSettings stop;
  // How each stopping setting was set, by its name: "--min-time" for a flag, "quick.toml:7: min_time" for
  // a suite key; absent: its default (a default never conflicts: `--max-time 1` alone is fine).
  std::map<std::string, std::string> given;
  double timeout_s = kDefaultCaseTimeoutS;
  std::string memory_limit;  // as written, e.g. "4G"; empty: none
  // The limit came from a suite file or maxbatch's default (90% of this machine's memory): it stands
  // for a CPU's memory and leaves GPU cases alone. --memory-limit on the command line caps both.
  bool memory_limit_cpu_only = false;
  int64_t max_image_pixels = 0;  // --max-image-pixels (0: data::kMaxImagePixels)
  bool system_allocator = false;
  std::string tf32 = "off";  // GPU: on | off (TF32 in cuBLAS and cuDNN for fp32 math)
  int auto_threads = 0;      // hidden --auto-threads: what threads 0 means in the child (0: one per core)

  // Throws InputError for a bad value.
  ChildSettings resolve() const;
  // Arguments that hand these settings to `trainbench run-case`.
  std::vector<std::string> child_args() const;
  // How a case's child runs under these settings: child_args() then `more`, --timeout, --memory-limit.
  CaseChild case_child(const std::vector<std::string>& more = {}) const;
  // The check of a TorchScript file runs in a child under this --timeout and --memory-limit, as a
  // case does (workloads/script.h: ScriptCheckPlace).
  void place_script_check() const;
};

// `run --dist`: data-parallel cases (docs/distributed.md); cli/'s DistFlags declares their flags.
struct DistOptions {
  bool enabled = false;
  std::string backend = "auto";  // auto | gloo | nccl
  double timeout_s = 300.0;      // rendezvous, store waits, collectives
  double bucket_mb = 25.0;       // gradient all-reduce bucket cap, MiB
  bool no_baseline = false;      // skip the one-process measurement (no scaling efficiency)

  // Arguments that hand these settings to `trainbench run-case` (with the case's store key).
  std::vector<std::string> child_args(size_t case_index) const;
  int64_t bucket_bytes() const { return static_cast<int64_t>(bucket_mb * 1024 * 1024); }
};

}  // namespace trainbench
