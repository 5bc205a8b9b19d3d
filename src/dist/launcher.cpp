#include "dist/launcher.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "core/subprocess.h"
#include "dist/env.h"
#include "runner/child.h"
#include "core/value_rules.h"

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
    return "was killed by " + signal_name(sig);
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

namespace {

void check_options(const LaunchOptions& o, const std::vector<std::string>& worker_args) {
  if (o.nproc < 1) throw InputError("--nproc must be at least 1");
  if (o.nnodes < 1) throw InputError("--nnodes must be at least 1");
  if (o.node_rank < 0 || o.node_rank >= o.nnodes) {
    throw InputError("--node-rank " + std::to_string(o.node_rank) + " is not below --nnodes " +
                     std::to_string(o.nnodes));
  }
  if (worker_args.empty())
    throw InputError("nothing to launch: give the worker's command after --, e.g. -- run --model resnet18 --dist");
  // The workers are data-parallel ranks: a `run --dist` or the all-reduce benchmark. A run without
  // --dist would start N independent runs on one -o (their journal lock would be the first error seen);
  // a launch inside a launch (or inside a torchrun worker) would nest process groups.
  const std::string& command = worker_args.front();
  if (command == "launch" || (std::getenv("LOCAL_RANK") != nullptr && std::getenv("WORLD_SIZE") != nullptr)) {
    throw InputError("launch cannot be nested: run it once per node, outside any launched worker");
  }
  const bool dist = std::find(worker_args.begin(), worker_args.end(), "--dist") != worker_args.end();
  if (command == "run" && !dist) {
    throw InputError("the workers' run has no --dist: each would train alone (add --dist: -- run ... --dist)");
  }
  if (command != "run" && command != "op") {
    throw InputError("launch starts `run ... --dist` or `op allreduce:...` workers, not '" + command + "'");
  }
}

// Rank 0's store: --master, or on one node 127.0.0.1 and a port free now.
std::pair<std::string, int> resolve_master(const LaunchOptions& o) {
  if (!o.master.empty()) return parse_host_port(o.master, "--master");
  if (o.nnodes > 1) {
    throw InputError("--nnodes " + std::to_string(o.nnodes) +
                     " needs --master HOST:PORT (rank 0's node, reachable from all)");
  }
  return {"127.0.0.1", free_local_port()};
}

// This process's environment without the torchrun variables, then the ones of local worker `local`.
std::vector<std::string> worker_env(const LaunchOptions& o, int local, const std::pair<std::string, int>& master) {
  std::vector<std::string> env;
  static const char* const kOwn[] = {"RANK=",
                                     "WORLD_SIZE=",
                                     "LOCAL_RANK=",
                                     "LOCAL_WORLD_SIZE=",
                                     "GROUP_RANK=",
                                     "MASTER_ADDR=",
                                     "MASTER_PORT=",
                                     "TORCHELASTIC_RUN_ID=",
                                     "TORCHELASTIC_USE_AGENT_STORE=",
                                     "TORCHELASTIC_RESTART_COUNT=",
                                     "TRAINBENCH_LAUNCH="};
  for (char** e = environ; *e != nullptr; ++e) {
    bool ours = false;
    for (const char* k : kOwn) ours = ours || std::strncmp(*e, k, std::strlen(k)) == 0;
    if (!ours) env.emplace_back(*e);
  }
  env.push_back("RANK=" + std::to_string(o.node_rank * o.nproc + local));
  env.push_back("WORLD_SIZE=" + std::to_string(o.nproc * o.nnodes));
  env.push_back("LOCAL_RANK=" + std::to_string(local));
  env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(o.nproc));
  env.push_back("GROUP_RANK=" + std::to_string(o.node_rank));
  env.push_back("MASTER_ADDR=" + master.first);
  env.push_back("MASTER_PORT=" + std::to_string(master.second));
  env.push_back("TRAINBENCH_LAUNCH=1");  // which launcher (dist/env.h): its variables win over srun's or mpirun's
  return env;
}

std::vector<Worker> start_workers(const LaunchOptions& o, const std::vector<std::string>& worker_args,
                                  const std::pair<std::string, int>& master) {
  SpawnSpec spec;
  spec.args = {self_executable()};
  spec.args.insert(spec.args.end(), worker_args.begin(), worker_args.end());
  std::vector<Worker> workers(static_cast<size_t>(o.nproc));
  for (int local = 0; local < o.nproc; ++local) {
    Worker& w = workers[static_cast<size_t>(local)];
    w.rank = o.node_rank * o.nproc + local;
    spec.env = worker_env(o, local, master);
    const Spawned child = spawn_child(spec);
    w.pid = child.pid;
    w.err_fd = child.err_fd;
    w.running = true;
  }
  return workers;
}

// Watches the workers until all have ended: forwards their stderr and Ctrl-C, and stops the others
// (SIGTERM, then SIGKILL after the grace time) once one fails.
class Supervisor {
 public:
  Supervisor(std::vector<Worker> workers, double grace_s) : workers_(std::move(workers)), grace_s_(grace_s) {}

  void run() {
    while (true) {
      if (g_signal != 0 && forwarded_ == 0) {
        forwarded_ = g_signal;
        if (first_failure_ == nullptr) begin_stop(forwarded_);
      }
      if (!forward_output()) break;
      reap();
      if (!step_stop()) break;
    }
  }
  const Worker* first_failure() const { return first_failure_; }
  int forwarded() const { return forwarded_; }

 private:
  void begin_stop(int sig) {
    signal_all(workers_, sig);
    stop_deadline_ = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(grace_s_ * 1000));
  }

  // One wait (100 ms at most) for the workers' stderr; false when poll failed.
  bool forward_output() {
    std::vector<int> fds;
    for (const auto& w : workers_) fds.push_back(w.err_fd);
    const bool ok = pump_pipes(fds, 100, [&](size_t i, const std::string& bytes) {
      forward_lines(workers_[i], bytes, bytes.empty());  // empty: end of file, flush what is left
    });
    for (size_t i = 0; i < fds.size(); ++i) workers_[i].err_fd = fds[i];
    return ok;
  }

  void reap() {
    for (auto& w : workers_) {
      if (!w.running) continue;
      int status = 0;
      if (waitpid(w.pid, &status, WNOHANG) != w.pid) continue;
      w.running = false;
      w.status = status;
      if (failed(status) && first_failure_ == nullptr && forwarded_ == 0) {
        first_failure_ = &w;
        begin_stop(SIGTERM);
      }
    }
  }

  // False once every worker has ended and its output has been read (or given up on).
  bool step_stop() {
    bool any_running = false, any_pipe = false;
    for (const auto& w : workers_) {
      any_running = any_running || w.running;
      any_pipe = any_pipe || w.err_fd >= 0;
    }
    if (any_running) {
      if (stop_deadline_ != Clock::time_point{} && !escalated_ && Clock::now() > stop_deadline_) {
        escalated_ = true;
        signal_all(workers_, SIGKILL);
      }
      return true;
    }
    if (!any_pipe) return false;
    // A grandchild may still hold a pipe open; the worker is gone, so do not wait for it.
    if (stop_deadline_ == Clock::time_point{}) stop_deadline_ = Clock::now() + std::chrono::seconds(2);
    if (Clock::now() <= stop_deadline_) return true;
    for (auto& w : workers_) {
      if (w.err_fd >= 0) {
        forward_lines(w, "", true);
        close(w.err_fd);
        w.err_fd = -1;
      }
    }
    return false;
  }

  std::vector<Worker> workers_;
  double grace_s_;
  const Worker* first_failure_ = nullptr;
  int forwarded_ = 0;  // the signal forwarded to the workers after Ctrl-C
  bool escalated_ = false;
  Clock::time_point stop_deadline_{};
};

// The launcher's exit code, with one line on stderr when a worker failed or we were interrupted.
int launch_exit_code(const Supervisor& s) {
  if (s.first_failure() != nullptr) {
    const Worker& w = *s.first_failure();
    std::cerr << "trainbench: error: rank " << w.rank << " " << describe(w.status)
              << (w.last_line.empty() ? "" : ": " + w.last_line) << std::endl;
    if (WIFSIGNALED(w.status)) return 1;
    return WEXITSTATUS(w.status);
  }
  if (s.forwarded() != 0) {
    std::cerr << "trainbench: launch: interrupted; workers stopped" << std::endl;
    return 130;
  }
  return 0;
}

}  // namespace

int launch_workers(const LaunchOptions& o, const std::vector<std::string>& worker_args) {
  check_options(o, worker_args);
  const std::pair<std::string, int> master = resolve_master(o);

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  Supervisor supervisor(start_workers(o, worker_args, master), o.grace_s);
  supervisor.run();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  return launch_exit_code(supervisor);
}

}  // namespace trainbench::dist
