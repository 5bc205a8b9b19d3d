#include "runner/child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "results/record.h"
#include "runner/measure.h"

namespace trainbench {
namespace {

volatile sig_atomic_t g_interrupted = 0;

void on_signal(int) { g_interrupted = 1; }

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
    return std::string("crashed with signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
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

std::string self_executable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "trainbench";
  buf[n] = '\0';
  return buf;
}

ChildOutcome run_child(const std::vector<std::string>& args, double timeout_s) {
  ChildOutcome out;
  int result_pipe[2];
  int err_pipe[2];
  if (pipe2(result_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    out.failure = std::string("cannot create pipes: ") + std::strerror(errno);
    return out;
  }
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    out.failure = std::string("cannot fork: ") + std::strerror(errno);
    return out;
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed runner takes its case with it
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    dup2(result_pipe[1], 3);  // dup2 clears O_CLOEXEC on the new descriptor
    dup2(err_pipe[1], 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  close(result_pipe[1]);
  close(err_pipe[1]);

  std::string result_text, err_text;
  bool timed_out = false;
  pollfd fds[2] = {{result_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    int wait_ms = 500;
    if (timeout_s > 0) {
      if (elapsed >= timeout_s) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min(500.0, (timeout_s - elapsed) * 1000.0) + 1);
    }
    if (g_interrupted) break;
    const int ready = poll(fds, 2, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    for (auto& f : fds) {
      if (f.fd < 0 || !(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(f.fd, buf, sizeof(buf));
      if (n > 0) {
        std::string& dst = f.fd == result_pipe[0] ? result_text : err_text;
        dst.append(buf, static_cast<size_t>(n));
        if (&dst == &err_text && err_text.size() > (1 << 16)) err_text.erase(0, err_text.size() - (1 << 15));
      } else {
        close(f.fd);
        f.fd = -1;
        --open_fds;
      }
    }
  }
  if (timed_out || g_interrupted) kill(-pid, SIGKILL);
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (g_interrupted && !timed_out) {
    out.interrupted = true;
    out.failure = "interrupted";
    return out;
  }
  if (timed_out) {
    out.failure = "timed out after " + std::to_string(static_cast<long>(timeout_s)) + " s";
    return out;
  }
  if (!result_text.empty()) {
    try {
      out.record = record_from_json(nlohmann::json::parse(result_text));
      out.record.wall_time_s = out.wall_s;
      out.have_record = true;
      return out;
    } catch (const std::exception& e) {
      out.failure = std::string("unreadable result from the case: ") + e.what();
      return out;
    }
  }
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  out.failure = describe_exit(status);
  const std::string last = last_nonempty_line(err_text);
  if (!last.empty()) out.failure += ": " + last;
  return out;
}

Record run_case_isolated(const Case& c, const std::vector<std::string>& flags, double timeout_s, bool memory_limited,
                         bool* interrupted) {
  std::vector<std::string> args = {self_executable(), "run-case", c.descriptor()};
  args.insert(args.end(), flags.begin(), flags.end());
  ChildOutcome out = run_child(args, timeout_s);
  *interrupted = out.interrupted;
  if (out.have_record) return std::move(out.record);
  Record r = failed_record(c, out.failure);
  r.wall_time_s = out.wall_s;
  if (memory_limited && (out.signal == SIGSEGV || out.signal == SIGBUS || out.signal == SIGABRT)) {
    r.status = Status::oom;
    r.error = out.failure + " under the memory limit (counted as out of memory)";
  }
  return r;
}

}  // namespace trainbench
