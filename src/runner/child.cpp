#include "runner/child.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "results/number_format.h"
#include "results/record.h"
#include "runner/measure.h"

namespace trainbench {
namespace {

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "crashed with " + signal_name(sig);
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status)) + " without a result";
}

}  // namespace

namespace {

// The outcome of an ended child from what it wrote and its exit status.
ChildOutcome outcome_of(const Captured& o, double timeout_s, ChildOutcome out) {
  const int status = o.status;
  if ((o.stopped || interrupt_requested()) && !o.timed_out) {
    out.interrupted = true;
    out.failure = "interrupted";
    return out;
  }
  if (o.timed_out) {
    out.failure = "timed out after " + std::to_string(static_cast<long>(timeout_s)) + " s";
    return out;
  }
  if (!o.result.empty()) {
    try {
      out.record = record_from_json(nlohmann::json::parse(o.result));
      out.record.wall_time_s = out.wall_s;
      out.have_record = true;
    } catch (const std::exception& e) {
      out.failure = std::string("unreadable result from the case: ") + e.what();
    }
    return out;
  }
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  out.failure = describe_exit(status);
  const std::string last = last_nonempty_line(o.err);
  if (!last.empty()) out.failure += ": " + last;
  return out;
}

}  // namespace

ChildOutcome run_child(const std::vector<std::string>& args, double timeout_s,
                       const std::function<std::string(pid_t)>& give_up) {
  ChildOutcome out;
  Captured captured;
  std::string given_up;
  try {
    SpawnSpec spec;
    spec.args = args;
    captured = run_captured(spec, timeout_s, [&](pid_t pid) {
      if (interrupt_requested()) return true;
      if (give_up) given_up = give_up(pid);
      return !given_up.empty();
    });
  } catch (const std::exception& e) {
    out.failure = e.what();
    return out;
  }
  out.wall_s = captured.wall_s;
  if (!given_up.empty() && !interrupt_requested()) {
    out.failure = given_up;
    return out;
  }
  return outcome_of(captured, timeout_s, std::move(out));
}

Record run_case_isolated(const Case& c, const CaseChild& child, bool* interrupted) {
  std::vector<std::string> args = {self_executable(), "run-case", c.descriptor()};
  args.insert(args.end(), child.flags.begin(), child.flags.end());
  ChildOutcome out = run_child(args, child.timeout_s, child.give_up);
  *interrupted = out.interrupted;
  const int64_t limit = child.limit_for(c);
  if (out.have_record) {
    Record& r = out.record;
    r.memory_limit_bytes = limit;
    // Under a CPU memory limit the case's tensors must fit in it. The limit caps the address space's
    // growth, and glibc's heap may hold the tensors in space mapped before the limit was set: under a
    // limit below that free heap (--memory-limit 1k) a case whose tensors far exceed it grew nothing.
    if (r.status == Status::ok && limit > 0 && !c.device.is_gpu() && r.memory && r.memory->peak_bytes > limit) {
      r.status = Status::oom;
      r.error = "its tensors peaked at " + format_bytes(r.memory->peak_bytes) + ", above the memory limit of " +
                format_bytes(limit) + " (held in heap mapped before the limit)";
    }
    return std::move(r);
  }
  Record r = failed_record(c, out.failure);
  r.wall_time_s = out.wall_s;
  r.memory_limit_bytes = limit;
  if (limit > 0 && (out.signal == SIGSEGV || out.signal == SIGBUS || out.signal == SIGABRT)) {
    r.status = Status::oom;
    r.error = out.failure + " under the memory limit (counted as out of memory)";
  }
  return r;
}

int64_t CaseChild::limit_for(const Case& c) const {
  return memory_limit_cpu_only && c.device.is_gpu() ? 0 : memory_limit_bytes;
}

}  // namespace trainbench
