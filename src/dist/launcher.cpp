#include "dist/launcher.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

#include "dist/env.h"
#include "runner/child.h"
#include "runner/plan.h"

extern char** environ;

namespace trainbench::dist {
namespace {

volatile sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

using Clock = std::chrono::steady_clock;

struct Worker {
  int rank = 0;
  pid_t pid = -1;
  int err_fd = -1;
  bool running = false;
  int status = 0;
  std::string partial;    // stderr text after the last newline
  std::string last_line;  // last non-empty stderr line
};

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

bool failed(int status) { return WIFSIGNALED(status) || WEXITSTATUS(status) != 0; }

// Passes complete lines through to our stderr, prefixed for ranks other than 0.
void forward_lines(Worker& w, const std::string& text, bool flush_partial) {
  w.partial += text;
  size_t start = 0;
  for (size_t nl; (nl = w.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string line = w.partial.substr(start, nl - start);
    const auto cr = line.rfind('\r');  // progress lines redrawn with \r: keep what shows last
    if (cr != std::string::npos) line = line.substr(cr + 1);
    if (line.find_first_not_of(" \t") != std::string::npos) w.last_line = line;
    std::cerr << (w.rank == 0 ? "" : "[rank " + std::to_string(w.rank) + "] ") << line << "\n";
  }
  w.partial.erase(0, start);
  if (flush_partial && !w.partial.empty()) {
    if (w.partial.find_first_not_of(" \t\r") != std::string::npos) w.last_line = w.partial;
    std::cerr << (w.rank == 0 ? "" : "[rank " + std::to_string(w.rank) + "] ") << w.partial << "\n";
    w.partial.clear();
  }
  std::cerr << std::flush;
}

void signal_all(std::vector<Worker>& workers, int sig) {
  for (auto& w : workers) {
    if (w.running) kill(-w.pid, sig);  // its process group: the worker and anything it started
  }
}

}  // namespace

int free_local_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("cannot create a socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    throw std::runtime_error(std::string("cannot find a free port: ") + std::strerror(errno));
  }
  close(fd);
  return ntohs(a.sin_port);
}

int launch_workers(const LaunchOptions& o, const std::vector<std::string>& worker_args) {
  if (o.nproc < 1) throw InputError("--nproc must be at least 1");
  if (o.nnodes < 1) throw InputError("--nnodes must be at least 1");
  if (o.node_rank < 0 || o.node_rank >= o.nnodes) {
    throw InputError("--node-rank " + std::to_string(o.node_rank) + " is not below --nnodes " + std::to_string(o.nnodes));
  }
  if (worker_args.empty()) throw InputError("nothing to launch: give the worker's command after --, e.g. -- run --model resnet18 --dist");
  std::string addr = "127.0.0.1";
  int port = 0;
  if (!o.master.empty()) {
    const auto hp = parse_host_port(o.master, "--master");
    addr = hp.first;
    port = hp.second;
  } else if (o.nnodes > 1) {
    throw InputError("--nnodes " + std::to_string(o.nnodes) + " needs --master HOST:PORT (rank 0's node, reachable from all)");
  } else {
    port = free_local_port();
  }
  const int world = o.nproc * o.nnodes;

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const std::string exe = self_executable();
  std::vector<Worker> workers(static_cast<size_t>(o.nproc));
  for (int local = 0; local < o.nproc; ++local) {
    Worker& w = workers[static_cast<size_t>(local)];
    w.rank = o.node_rank * o.nproc + local;
    // Everything exec needs is built before fork: the child may only make async-signal-safe calls.
    std::vector<std::string> env_text;
    static const char* const kOwn[] = {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=", "GROUP_RANK=",
                                       "MASTER_ADDR=", "MASTER_PORT=", "TORCHELASTIC_RUN_ID="};
    for (char** e = environ; *e != nullptr; ++e) {
      bool ours = false;
      for (const char* k : kOwn) ours = ours || std::strncmp(*e, k, std::strlen(k)) == 0;
      if (!ours) env_text.emplace_back(*e);
    }
    env_text.push_back("RANK=" + std::to_string(w.rank));
    env_text.push_back("WORLD_SIZE=" + std::to_string(world));
    env_text.push_back("LOCAL_RANK=" + std::to_string(local));
    env_text.push_back("LOCAL_WORLD_SIZE=" + std::to_string(o.nproc));
    env_text.push_back("GROUP_RANK=" + std::to_string(o.node_rank));
    env_text.push_back("MASTER_ADDR=" + addr);
    env_text.push_back("MASTER_PORT=" + std::to_string(port));
    std::vector<char*> envp, argv;
    for (auto& s : env_text) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = {exe};
    args.insert(args.end(), worker_args.begin(), worker_args.end());
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);

    int err[2];
    if (pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("cannot fork: ") + std::strerror(errno));
    if (pid == 0) {
      setpgid(0, 0);                      // Ctrl-C reaches workers only through us, once
      prctl(PR_SET_PDEATHSIG, SIGKILL);   // a killed launcher takes its workers along
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      dup2(err[1], 2);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    setpgid(pid, pid);
    close(err[1]);
    w.pid = pid;
    w.err_fd = err[0];
    w.running = true;
  }

  const Worker* first_failure = nullptr;
  int forwarded = 0;  // the signal forwarded to the workers after Ctrl-C
  bool escalated = false;
  Clock::time_point stop_deadline{};
  auto begin_stop = [&](int sig) {
    signal_all(workers, sig);
    stop_deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.grace_s * 1000));
  };
  char buf[8192];
  while (true) {
    if (g_signal != 0 && forwarded == 0) {
      forwarded = g_signal;
      if (first_failure == nullptr) begin_stop(forwarded);
    }
    std::vector<pollfd> fds;
    for (auto& w : workers) {
      if (w.err_fd >= 0) fds.push_back({w.err_fd, POLLIN, 0});
    }
    if (!fds.empty() && poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) break;
    if (fds.empty()) usleep(100 * 1000);
    for (const auto& f : fds) {
      if (!(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      for (auto& w : workers) {
        if (w.err_fd != f.fd) continue;
        const ssize_t n = read(w.err_fd, buf, sizeof(buf));
        if (n > 0) {
          forward_lines(w, std::string(buf, static_cast<size_t>(n)), false);
        } else if (n == 0 || errno != EINTR) {
          forward_lines(w, "", true);
          close(w.err_fd);
          w.err_fd = -1;
        }
      }
    }
    // Reap whoever ended.
    for (auto& w : workers) {
      if (!w.running) continue;
      int status = 0;
      if (waitpid(w.pid, &status, WNOHANG) != w.pid) continue;
      w.running = false;
      w.status = status;
      if (failed(status) && first_failure == nullptr && forwarded == 0) {
        first_failure = &w;
        begin_stop(SIGTERM);
      }
    }
    bool any_running = false, any_pipe = false;
    for (const auto& w : workers) {
      any_running = any_running || w.running;
      any_pipe = any_pipe || w.err_fd >= 0;
    }
    if (!any_running) {
      if (!any_pipe) break;
      // A grandchild may still hold a pipe open; the worker is gone, so do not wait for it.
      if (stop_deadline == Clock::time_point{}) stop_deadline = Clock::now() + std::chrono::seconds(2);
      if (Clock::now() > stop_deadline) {
        for (auto& w : workers) {
          if (w.err_fd >= 0) {
            forward_lines(w, "", true);
            close(w.err_fd);
            w.err_fd = -1;
          }
        }
        break;
      }
    } else if (stop_deadline != Clock::time_point{} && !escalated && Clock::now() > stop_deadline) {
      escalated = true;
      signal_all(workers, SIGKILL);
    }
  }
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);

  if (first_failure != nullptr) {
    const Worker& w = *first_failure;
    std::cerr << "trainbench: error: rank " << w.rank << " " << describe(w.status)
              << (w.last_line.empty() ? "" : ": " + w.last_line) << std::endl;
    if (WIFSIGNALED(w.status)) return 1;
    return WEXITSTATUS(w.status);
  }
  if (forwarded != 0) {
    std::cerr << "trainbench: launch: interrupted; workers stopped" << std::endl;
    return 130;
  }
  return 0;
}

}  // namespace trainbench::dist
