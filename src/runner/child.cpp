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
#include "results/record.h"
#include "runner/measure.h"

namespace trainbench {
namespace {

volatile sig_atomic_t g_interrupted = 0;

void on_signal(int sig) { g_interrupted = sig; }  // SIGINT or SIGTERM, both non-zero

std::string last_nonempty_line(const std::string& text) {
  size_t end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end - start + 1);
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "crashed with " + signal_name(sig);
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status)) + " without a result";
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() returns EINTR so the parent reacts at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupt_requested() { return g_interrupted != 0; }

int interrupt_exit_code() { return 128 + (g_interrupted != 0 ? static_cast<int>(g_interrupted) : SIGINT); }

std::string self_executable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "trainbench";
  buf[n] = '\0';
  return buf;
}

namespace {

// What a child left in its pipes by the time it ended, was killed for its timeout, or we were interrupted.
struct ChildOutput {
  std::string result_text, err_text;
  bool timed_out = false;
};

ChildOutput collect_output(const Spawned& child, double timeout_s, std::chrono::steady_clock::time_point start) {
  ChildOutput o;
  std::vector<int> fds = {child.result_fd, child.err_fd};
  while (fds[0] >= 0 || fds[1] >= 0) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    int wait_ms = 500;
    if (timeout_s > 0) {
      if (elapsed >= timeout_s) {
        o.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min(500.0, (timeout_s - elapsed) * 1000.0) + 1);
    }
    if (g_interrupted) break;
    const bool polled = pump_pipes(fds, wait_ms, [&](size_t i, const std::string& bytes) {
      if (i == 0) {
        o.result_text += bytes;
        return;
      }
      o.err_text += bytes;
      if (o.err_text.size() > (1 << 16)) o.err_text.erase(0, o.err_text.size() - (1 << 15));  // the end says why
    });
    if (!polled) break;
  }
  if (o.timed_out || g_interrupted) kill(-child.pid, SIGKILL);
  close_pipes(fds);
  return o;
}

// The outcome of an ended child from what it wrote and its exit status.
ChildOutcome outcome_of(const ChildOutput& o, int status, double timeout_s, ChildOutcome out) {
  if (g_interrupted && !o.timed_out) {
    out.interrupted = true;
    out.failure = "interrupted";
    return out;
  }
  if (o.timed_out) {
    out.failure = "timed out after " + std::to_string(static_cast<long>(timeout_s)) + " s";
    return out;
  }
  if (!o.result_text.empty()) {
    try {
      out.record = record_from_json(nlohmann::json::parse(o.result_text));
      out.record.wall_time_s = out.wall_s;
      out.have_record = true;
    } catch (const std::exception& e) {
      out.failure = std::string("unreadable result from the case: ") + e.what();
    }
    return out;
  }
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  out.failure = describe_exit(status);
  const std::string last = last_nonempty_line(o.err_text);
  if (!last.empty()) out.failure += ": " + last;
  return out;
}

}  // namespace

ChildOutcome run_child(const std::vector<std::string>& args, double timeout_s) {
  ChildOutcome out;
  const auto start = std::chrono::steady_clock::now();
  Spawned child;
  try {
    SpawnSpec spec;
    spec.args = args;
    spec.result_pipe = true;
    child = spawn_child(spec);
  } catch (const std::exception& e) {
    out.failure = e.what();
    return out;
  }
  const ChildOutput output = collect_output(child, timeout_s, start);
  int status = 0;
  while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {}
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome_of(output, status, timeout_s, std::move(out));
}

Record run_case_isolated(const Case& c, const CaseChild& child, bool* interrupted) {
  std::vector<std::string> args = {self_executable(), "run-case", c.descriptor()};
  args.insert(args.end(), child.flags.begin(), child.flags.end());
  ChildOutcome out = run_child(args, child.timeout_s);
  *interrupted = out.interrupted;
  if (out.have_record) return std::move(out.record);
  Record r = failed_record(c, out.failure);
  r.wall_time_s = out.wall_s;
  if (child.memory_limited && (out.signal == SIGSEGV || out.signal == SIGBUS || out.signal == SIGABRT)) {
    r.status = Status::oom;
    r.error = out.failure + " under the memory limit (counted as out of memory)";
  }
  return r;
}

}  // namespace trainbench
