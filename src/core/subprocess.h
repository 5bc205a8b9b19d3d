// Child processes of trainbench, started one way: fork + exec (never fork a process whose GPU runtime
// is initialised and keep running it), each in its own process group, tied to its parent's life, its
// stderr (and optionally fd 3) read through pipes. The case runner (runner/child) and the data-parallel
// launcher (dist/launcher) both start and watch their children with these.
#pragma once
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace trainbench {

struct SpawnSpec {
  std::vector<std::string> args;                // argv; args[0] is the executable's path
  std::optional<std::vector<std::string>> env;  // the whole environment ("K=V"); none: this process's
  bool result_pipe = false;                     // give the child fd 3, a pipe read in Spawned::result_fd
};

// A started child: its pid (also its process group's id) and the read ends of its pipes (-1: none).
struct Spawned {
  pid_t pid = -1;
  int err_fd = -1;
  int result_fd = -1;
};

// Starts `s` in a new process group with SIGINT/SIGTERM at their defaults and SIGKILL on the parent's
// death. Throws std::runtime_error when a pipe or the fork fails ("cannot fork: ...").
Spawned spawn_child(const SpawnSpec& s);

// Waits up to `wait_ms` for any of `fds` to be readable (entries of -1 are skipped; with none open this
// is a sleep), then reads once from each ready one: on_data(index, bytes) with what came, or at end of
// file closes the fd, sets its entry to -1 and calls on_data(index, "") once. Returns false when poll
// fails for a reason other than a signal.
bool pump_pipes(std::vector<int>& fds, int wait_ms, const std::function<void(size_t, const std::string&)>& on_data);

// Closes each open fd in `fds` and sets it to -1.
void close_pipes(std::vector<int>& fds);

// "signal 9 (Killed)": how an exit by a signal is named in messages.
std::string signal_name(int sig);

}  // namespace trainbench
