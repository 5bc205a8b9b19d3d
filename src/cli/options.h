// Flags shared by the measuring subcommands, and the entry points of each subcommand.
#pragma once
#include <CLI/CLI.hpp>

#include <set>
#include <string>
#include <vector>

#include "runner/measure.h"

namespace trainbench::cli {

// Measurement flags (--warmup, --min-steps, --min-time, --max-time, --max-noise, --timeout, --memory-limit).
struct MeasureFlags {
  long warmup = 2;
  long min_steps = 5;
  long max_steps = 100000;
  double min_time_s = 2.0;
  double max_time_s = 60.0;
  double max_noise_pct = 2.0;
  double timeout_s = 900.0;
  std::string memory_limit;  // as written, e.g. "4G"; empty: none
  bool system_allocator = false;

  void add_to(CLI::App& app);
  // Throws InputError for a bad value.
  ChildSettings resolve() const;
  // Arguments that hand these settings to `trainbench run-case`.
  std::vector<std::string> child_args() const;
};

struct RunOptions {
  std::string models, batches, devices, precisions = "fp32", layouts = "nchw", optimizers = "sgd", threads = "0";
  bool forward_only = false;
  std::vector<std::string> sets;  // --set key=v1,v2
  std::string suite;
  std::vector<std::string> cases;
  std::string output;
  std::string format = "table";
  bool resume = false;
  MeasureFlags measure;
};

// Prints "trainbench: error: <what>" as one line on stderr; returns the bad-input exit code.
int bad_input(const std::string& what);

int cmd_list();
int cmd_run(RunOptions o, const CLI::App& sub);
int cmd_run_case(const std::string& descriptor, const MeasureFlags& flags, int result_fd);

}  // namespace trainbench::cli
