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

// What a child run to its end by run_captured left, and how it ended.
struct Captured {
  std::string result;       // what it wrote to fd 3
  std::string err;          // what it wrote to stderr (the last 32 KiB or more when it wrote more: the end says why)
  bool timed_out = false;   // killed at the timeout
  bool stopped = false;     // killed because `stop` said so
  int status = 0;           // its waitpid status
  double wall_s = 0.0;
};

// Runs `s` with fd 3 as a result pipe until both pipes close, reading them as they fill; kills its
// whole group after `timeout_s` (0: no limit) or when `stop(pid)` returns true (checked at least twice
// a second), and reaps it. `on_err` sees stderr's bytes as they come. Throws std::runtime_error when it
// cannot start (spawn_child).
Captured run_captured(SpawnSpec s, double timeout_s, const std::function<bool(pid_t)>& stop = {},
                      const std::function<void(const std::string&)>& on_err = {});

// What process `pid` is doing, in words, from /proc: "running", "waiting (sleeping)", "stopped by a
// signal (SIGSTOP or SIGTSTP)", ... ("gone" when it has no entry).
std::string process_state(pid_t pid);

// The absolute path of the running executable (to start itself as a child).
std::string self_executable();

// The last line of `text` with anything but blanks in it, without its trailing blanks ("" when none):
// what a child's stderr says last is why it ended.
std::string last_nonempty_line(const std::string& text);

// "signal 9 (Killed)": how an exit by a signal is named in messages.
std::string signal_name(int sig);

// Installs SIGINT/SIGTERM handlers so a running child is killed and the caller can save what it has.
void install_interrupt_handlers();
bool interrupt_requested();
// The shell's code for the signal that interrupted: 130 for SIGINT (Ctrl-C), 143 for SIGTERM.
int interrupt_exit_code();

}  // namespace trainbench
