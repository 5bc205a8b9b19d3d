// Runs one case in a child process of this same binary (core/subprocess: fork + exec) with a
// wall-clock timeout. The child writes its Record as JSON to fd 3.
#pragma once
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "core/subprocess.h"
#include "results/record.h"
#include "cases/case.h"

namespace trainbench {

struct ChildOutcome {
  bool have_record = false;
  Record record;             // valid when have_record
  std::string failure;       // one line when !have_record: crash, timeout, bad output
  bool interrupted = false;  // the parent received SIGINT/SIGTERM while the child ran
  int signal = 0;            // the signal that ended the child, if one did (not our timeout kill)
  double wall_s = 0.0;
};

// Runs `args` (argv[0] is the executable) in its own process group, reading the record from fd 3.
// After `timeout_s` (0 = none) the whole group is killed and the outcome is a timeout failure; when
// `give_up` answers (CaseChild::give_up) the group is killed and the answer is the failure.
ChildOutcome run_child(const std::vector<std::string>& args, double timeout_s,
                       const std::function<std::string(pid_t)>& give_up = {});

// How a case's child runs: the flags after `run-case DESCRIPTOR` (MeasureFlags::child_args and any
// more), its wall-clock limit (0 = none), and the memory limit its flags give it (0 = none): a crash
// (SIGSEGV, SIGBUS, SIGABRT) of a case under it counts as `oom`, since near RLIMIT_AS some libraries
// do not survive a failed allocation; the error text keeps the signal. The record carries the limit
// its case ran under (Record::memory_limit_bytes).
struct CaseChild {
  std::vector<std::string> flags;
  double timeout_s = 0.0;
  int64_t memory_limit_bytes = 0;
  bool memory_limit_cpu_only = false;  // a GPU case runs without it (a suite's limit for its CPU cases)
  // The limit case `c` runs under: memory_limit_bytes, or 0 for a GPU case when the limit is CPU-only.
  int64_t limit_for(const Case& c) const;
  // Asked about twice a second while the child runs, with its pid: a non-empty answer ends the case at
  // once (the child's group is killed) as an error with that answer as its reason. A data-parallel
  // rank gives up a case that another rank has failed.
  std::function<std::string(pid_t)> give_up;
};

// Runs case `c` as `<self> run-case DESCRIPTOR <flags...>` and returns its Record, or an `error`
// Record saying why there is none (crash, timeout). Sets *interrupted (no Record then) on Ctrl-C.
Record run_case_isolated(const Case& c, const CaseChild& child, bool* interrupted);

// install_interrupt_handlers, interrupt_requested, interrupt_exit_code: core/subprocess.h.

}  // namespace trainbench
