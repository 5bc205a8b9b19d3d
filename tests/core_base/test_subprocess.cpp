// core/subprocess: how the case runner and the launcher start and watch their children.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/subprocess.h"

namespace trainbench {
namespace {

struct Collected {
  std::string err, result;
  int status = 0;
};

// Reads both pipes of `c` to their end, then reaps it.
Collected collect(const Spawned& c) {
  Collected out;
  std::vector<int> fds = {c.err_fd, c.result_fd};
  for (int i = 0; i < 200 && (fds[0] >= 0 || fds[1] >= 0); ++i) {
    EXPECT_TRUE(
        pump_pipes(fds, 100, [&](size_t k, const std::string& bytes) { (k == 0 ? out.err : out.result) += bytes; }));
  }
  close_pipes(fds);
  waitpid(c.pid, &out.status, 0);
  return out;
}

TEST(Subprocess, StderrAndTheResultPipeComeBackSeparatelyWithTheExitCode) {
  SpawnSpec s;
  s.args = {"/bin/sh", "-c", "echo to-stderr >&2; printf to-fd3 >&3; echo to-stdout; exit 3"};
  s.result_pipe = true;
  const Spawned c = spawn_child(s);
  ASSERT_GE(c.result_fd, 0);
  const Collected out = collect(c);
  EXPECT_EQ(out.err, "to-stderr\n");
  EXPECT_EQ(out.result, "to-fd3");
  ASSERT_TRUE(WIFEXITED(out.status));
  EXPECT_EQ(WEXITSTATUS(out.status), 3);
}

TEST(Subprocess, AGivenEnvironmentReplacesOursAndNoneInheritsIt) {
  ASSERT_EQ(setenv("TRAINBENCH_SUBPROCESS_TEST", "inherited", 1), 0);
  SpawnSpec s;
  s.args = {"/bin/sh", "-c", "echo \"${TRAINBENCH_SUBPROCESS_TEST:-unset} ${OTHER:-unset}\" >&2"};
  EXPECT_EQ(collect(spawn_child(s)).err, "inherited unset\n");
  s.env = std::vector<std::string>{"OTHER=given"};
  EXPECT_EQ(collect(spawn_child(s)).err, "unset given\n");
  unsetenv("TRAINBENCH_SUBPROCESS_TEST");
}

TEST(Subprocess, TheChildLeadsItsOwnProcessGroupSoItsGroupCanBeKilled) {
  SpawnSpec s;
  s.args = {"/bin/sh", "-c", "sleep 30"};
  const Spawned c = spawn_child(s);
  EXPECT_EQ(getpgid(c.pid), c.pid);
  EXPECT_EQ(c.result_fd, -1) << "no fd 3 unless asked";
  ASSERT_EQ(kill(-c.pid, SIGKILL), 0);
  const Collected out = collect(c);
  ASSERT_TRUE(WIFSIGNALED(out.status));
  EXPECT_EQ(WTERMSIG(out.status), SIGKILL);
  EXPECT_EQ(signal_name(SIGKILL), "signal 9 (Killed)");
}

TEST(Subprocess, AnExecThatFailsExits127) {
  SpawnSpec s;
  s.args = {"/nonexistent/trainbench-no-such-program"};
  const Collected out = collect(spawn_child(s));
  ASSERT_TRUE(WIFEXITED(out.status));
  EXPECT_EQ(WEXITSTATUS(out.status), 127);
}

TEST(Subprocess, WithNoOpenPipeAPumpIsAWait) {
  std::vector<int> fds = {-1, -1};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(pump_pipes(fds, 50, [](size_t, const std::string&) { ADD_FAILURE() << "no pipe was open"; }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(45));
}

}  // namespace
}  // namespace trainbench
