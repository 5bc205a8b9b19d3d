#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace trainbench {
namespace {

volatile sig_atomic_t g_interrupted = 0;

void on_signal(int sig) { g_interrupted = sig; }  // SIGINT or SIGTERM, both non-zero

// Both ends close on exec: the child keeps only what it dup2()s onto 2 and 3.
void make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
}

std::vector<char*> c_strings(std::vector<std::string>& text) {
  std::vector<char*> out;
  for (auto& s : text) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

Spawned spawn_child(const SpawnSpec& s) {
  // Everything exec needs is built before fork: the child may only make async-signal-safe calls.
  std::vector<std::string> args = s.args;
  std::vector<std::string> env = s.env.value_or(std::vector<std::string>{});
  std::vector<char*> argv = c_strings(args);
  std::vector<char*> envp = c_strings(env);
  int err[2];
  int result[2] = {-1, -1};
  make_pipe(err);
  if (s.result_pipe) {
    try {
      make_pipe(result);
    } catch (...) {
      close(err[0]);
      close(err[1]);
      throw;
    }
  }
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    for (int fd : {err[0], err[1], result[0], result[1]}) {
      if (fd >= 0) close(fd);
    }
    throw std::runtime_error(std::string("cannot fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    setpgid(0, 0);                     // Ctrl-C reaches the child only through us, once
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed parent takes its child along
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (s.result_pipe) dup2(result[1], 3);  // dup2 clears O_CLOEXEC on the new descriptor
    dup2(err[1], 2);
    if (s.env) {
      execve(argv[0], argv.data(), envp.data());
    } else {
      execv(argv[0], argv.data());
    }
    _exit(127);
  }
  setpgid(pid, pid);  // also here: the parent may signal the group before the child ran setpgid
  close(err[1]);
  if (s.result_pipe) close(result[1]);
  return {pid, err[0], result[0]};
}

bool pump_pipes(std::vector<int>& fds, int wait_ms, const std::function<void(size_t, const std::string&)>& on_data) {
  std::vector<pollfd> polled;
  for (int fd : fds) polled.push_back({fd, POLLIN, 0});  // poll skips negative fds
  if (poll(polled.data(), polled.size(), wait_ms) < 0) return errno == EINTR;
  char buf[65536];
  for (size_t i = 0; i < polled.size(); ++i) {
    if (polled[i].fd < 0 || !(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const ssize_t n = read(polled[i].fd, buf, sizeof(buf));
    if (n > 0) {
      on_data(i, std::string(buf, static_cast<size_t>(n)));
    } else if (n == 0 || errno != EINTR) {
      close(fds[i]);
      fds[i] = -1;
      on_data(i, std::string());
    }
  }
  return true;
}

void close_pipes(std::vector<int>& fds) {
  for (int& fd : fds) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

Captured run_captured(SpawnSpec s, double timeout_s, const std::function<bool(pid_t)>& stop,
                      const std::function<void(const std::string&)>& on_err) {
  const auto start = std::chrono::steady_clock::now();
  s.result_pipe = true;
  const Spawned child = spawn_child(s);
  Captured c;
  std::vector<int> fds = {child.result_fd, child.err_fd};
  while (fds[0] >= 0 || fds[1] >= 0) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    int wait_ms = 500;
    if (timeout_s > 0) {
      if (elapsed >= timeout_s) {
        c.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min(500.0, (timeout_s - elapsed) * 1000.0) + 1);
    }
    if (stop && stop(child.pid)) {
      c.stopped = true;
      break;
    }
    const bool polled = pump_pipes(fds, wait_ms, [&](size_t i, const std::string& bytes) {
      if (i == 0) {
        c.result += bytes;
        return;
      }
      if (on_err) on_err(bytes);
      c.err += bytes;
      if (c.err.size() > (1 << 16)) c.err.erase(0, c.err.size() - (1 << 15));
    });
    if (!polled) break;
  }
  if (c.timed_out || c.stopped) kill(-child.pid, SIGKILL);
  close_pipes(fds);
  while (waitpid(child.pid, &c.status, 0) < 0 && errno == EINTR) {}
  c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

std::string process_state(pid_t pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (f == nullptr) return "gone";
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const std::string stat(buf, n);
  const size_t paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos || paren + 2 >= stat.size()) return "in an unknown state";
  switch (stat[paren + 2]) {
    case 'R':
      return "running";
    case 'S':
      return "waiting (sleeping)";
    case 'D':
      return "waiting on I/O (uninterruptible)";
    case 'T':
      return "stopped by a signal (SIGSTOP or SIGTSTP)";
    case 't':
      return "stopped by a debugger";
    case 'Z':
      return "ended, not yet reaped";
    default:
      return std::string("in state ") + stat[paren + 2];
  }
}

std::string self_executable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "trainbench";
  buf[n] = '\0';
  return buf;
}

std::string last_nonempty_line(const std::string& text) {
  const size_t end = text.find_last_not_of("\n\r \t");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end - start + 1);
}

std::string signal_name(int sig) { return "signal " + std::to_string(sig) + " (" + strsignal(sig) + ")"; }

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

}  // namespace trainbench
