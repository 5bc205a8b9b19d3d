// The shared flag groups (each flag declared once, with one help text, in flag_groups.cpp), each
// subcommand's options, and the entry points of each subcommand. Where a subcommand's flags are
// registered: cli/flags.h.
#pragma once
#include <CLI/CLI.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "run/settings.h"
#include "runner/child.h"
#include "runner/maxbatch.h"
#include "results/context.h"
#include "runner/measure.h"
#include "core/value_rules.h"
#include "cli/shared_flags.h"
#include "cli/store_flags.h"
#include "store/store.h"

namespace trainbench {
struct Sweep;
class Journal;
}

namespace trainbench::cli {

// The measurement flags (run/settings.h's MeasureOptions): each stopping setting's flag made from its row
// (core/stopping.h), --timeout, --memory-limit, --allocator/--system-allocator, --tf32.
struct MeasureFlags : MeasureOptions {
  void add_to(CLI::App& app);
};

// maxbatch and memory measure many short tries: a step or two each, not a stable median. They answer
// what fits, so a CPU case's heap is glibc's as a PyTorch program has it: with the tuned heap, freed
// large blocks stay and whether the next one reuses a hole decides the footprint by whole blocks
// (docs/memory.md, "The heap a prediction is for"). Their defaults, before the flags are read.
void trial_defaults(MeasureFlags& m);

// `run --dist`'s flags (run/settings.h's DistOptions).
struct DistFlags : DistOptions {
  void add_to(CLI::App& app);
};

// --input and --target: `--model FILE.pt` is then one TorchScript file (workloads/script.h), its path
// taken whole (commas and colons included), not a comma list of workloads.
struct ScriptFlags {
  std::string input;   // 3x224x224 | tokens:SEQ
  std::string target;  // classes:K | next-token:V | mse

  void add_to(CLI::App& app);
  bool given() const { return !input.empty() || !target.empty(); }
};

// The models of a sweep from --model: a comma list of workloads, or with --input/--target one
// TorchScript file, whose file=, input= and target= are then added to every parameter combination in
// `params`. Throws InputError (a model file without --input/--target, one of the two alone).
std::vector<std::string> sweep_models(const std::string& models, const ScriptFlags& script,
                                      std::vector<std::map<std::string, std::string>>& params);

// The flags that shape a sweep of cases (run, maxbatch, memory): --model, --device, --precision,
// --layout, --optimizer (comma lists), --input/--target, --set, --forward-only. The options structs
// derive from the groups they use, so a subcommand reads o.models as a field of its own.
struct SweepFlags {
  std::string models, devices, precisions = "fp32", layouts = "nchw", optimizers = "sgd";
  std::vector<std::string> sets;  // --set key=v1,v2
  bool forward_only = false;
  ScriptFlags script;  // --input, --target: --model names a TorchScript file

  void add_to(CLI::App& app);
  // The sweep these flags describe (models and their parameters, precisions, layouts, optimizers,
  // devices, forward-only); batches and threads are the subcommand's. Throws InputError.
  Sweep to_sweep() const;
};

// --data, --data-dtype, --data-transfer: real input (src/data) for run and explain.
struct InputDataFlags {
  std::string data = "synthetic", data_dtype = "uint16", data_transfer = "float";

  void add_to(CLI::App& app);
};

// --device and --threads of the subcommands that measure in this process (explain, op, peak): one
// device, one thread count.
struct InProcessFlags {
  std::string device;  // empty: the best one present
  int threads = 0;     // 0: one per core

  void add_to(CLI::App& app);
};

struct RunOptions : SweepFlags, InputDataFlags {
  std::string batches, threads = "0";
  std::string loader_threads = "0";
  std::string suite;
  std::vector<std::string> cases;
  std::string output;
  std::string format = "table";
  bool resume = false;
  bool force = false;  // --resume --force: resume even a journal written by a different plan
  std::string report;  // --report FILE: the HTML report of the results, written at the end
  MeasureFlags measure;
  DistFlags dist;
  StoreFlags store;
};

// Hidden `dist-allreduce`: the all-reduce micro-benchmark inside `launch` (see dist/allreduce_bench.h).
struct AllreduceFlags {
  std::string cases;  // allreduce:SIZE,...; empty: DeepBench's sizes
  MeasureFlags measure;
  DistFlags dist;
};

// Throws InputError when a minimum set by the user is above a maximum set by the user (or above the
// default of a floor): "--min-steps 10 is above --max-steps 5" (core/stopping.h, StopSetting::at_least).
void check_limit_conflicts(const MeasureFlags& m);

// `run --report FILE`: writes the HTML report of the results file just written and says where it is.
void report_after_run(const std::string& results_path, const std::string& report_path);

// results/<kind>-<UTC time>.json; the k-th (k > 1) name of that second: results/<kind>-<UTC time>-k.json.
std::string default_output_path(const std::string& kind, int k = 1);
// Takes the output's lock for this command (the lock `run` holds on its journal, output + ".journal"),
// so that no two commands write one file: another holding it is one line, exit 2. With no output
// given, the first default name of `kind` in this second whose file and journal do not exist and whose
// lock is free (runs started in the same second each get their own). Returns the output.
std::string lock_output(const std::string& given, const std::string& kind, Journal& lock);
// A measuring command's output (explain, maxbatch, memory, op): check_output's checks, then its lock
// (lock_output). Returns the output.
std::string claim_command_output(const std::string& given, const std::string& kind,
                                 const std::vector<std::string>& inputs, const StoreSpec& store, Journal& lock);

// The files the cases of `plan` read (TorchScript model files, --data files and folders).
std::vector<std::string> case_input_files(const std::vector<Case>& plan);

// A batch search's try as it ends, one line on stderr ("  try batch     64: ok, 812 images/s").
void say_try(const Case& trial, const Record& r);
// A batch search on the CPU without --memory-limit: limits it to 90% of the memory available now
// (run/batch_search.h) and says so on stderr, naming `command`.
void limit_cpu_search(const std::vector<Case>& plan, MeasureFlags& measure, const std::string& command);
// The device named (empty: the best one present); throws InputError when it is unknown or absent.
DeviceSpec resolve_device(const std::string& text);
// A comma list whose values must be among `allowed`; throws InputError naming `what`.
std::vector<std::string> checked_list(const std::string& text, const std::string& what,
                                      const std::vector<std::string>& allowed);
// Prepares this process to measure in-process as a case child does (threads, allocator, warm pools).
// Returns the thread count in effect.
// `tune_allocator`: as a case's child does unless --system-allocator (docs/methodology.md).
int prepare_in_process(const DeviceSpec& device, int threads, bool tune_allocator);
// --loader-threads "1,2,4": each between 1 and kThreadCount's maximum (0 allowed when `zero_ok`: the default).
std::vector<int> loader_thread_list(const std::string& text, bool zero_ok);
int cmd_dist_allreduce(const AllreduceFlags& o);

}  // namespace trainbench::cli
