// Helpers for the tests that run the trainbench binary (TRAINBENCH_EXE): a shell command's exit code,
// a run's exit code, stdout and stderr (with an environment or a time limit), the check that bad input
// was refused, a file's text, and a fresh scratch directory per test.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace trainbench {
namespace test {

// What a run of the binary left: its exit code (-1 if it did not exit normally), stdout and stderr.
// (Not `Run`: that would hide gtest's Test::Run inside TEST bodies.)
struct CmdResult {
  int code = -1;
  std::string out, err;
};

// The whole file as text; "" if it cannot be read.
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// An empty directory <tmp>/trainbench_<area>_<name>_<pid>, removed first if it was left from before.
inline std::filesystem::path temp_dir(const std::string& area, const std::string& name) {
  namespace fs = std::filesystem;
  fs::path d = fs::temp_directory_path() / ("trainbench_" + area + "_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Runs `cmd` with /bin/sh; its exit code, or -1 if it did not exit normally.
inline int shell(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// How run_trainbench starts the binary: `env` (arguments of env(1), e.g. "-u RANK FOO=1") before it,
// and `timeout_s` > 0 kills it after that long (timeout(1): a hang shows as exit 124, never as a stuck test).
struct RunWith {
  std::string env;
  int timeout_s = 0;
};

// Runs `exe <args>` (a copy of trainbench) with no stdin; stdout and stderr go through files in `dir`.
inline CmdResult run_program(const std::string& exe, const std::string& args, const std::filesystem::path& dir,
                             const RunWith& with = {}) {
  const std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  std::string prefix;
  if (with.timeout_s > 0) prefix += "timeout -k 5 " + std::to_string(with.timeout_s) + " ";
  if (!with.env.empty()) prefix += "env " + with.env + " ";
  CmdResult r;
  r.code = shell(prefix + exe + " " + args + " > " + out.string() + " 2> " + err.string() + " < /dev/null");
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// Runs `trainbench <args>` as run_program does, the build's trainbench.
inline CmdResult run_trainbench(const std::string& args, const std::filesystem::path& dir, const RunWith& with = {}) {
  return run_program(TRAINBENCH_EXE, args, dir, with);
}

inline int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// Whether `r` refused bad input as every subcommand must: exit code 2 and one line on stderr,
// "trainbench: error: ...", holding each of `fragments`. EXPECT_TRUE(refused(r, {...})) << context.
inline ::testing::AssertionResult refused(const CmdResult& r, const std::vector<std::string>& fragments) {
  if (r.code != 2) return ::testing::AssertionFailure() << "exit code " << r.code << ", not 2; stderr:\n" << r.err;
  if (count_lines(r.err) != 1) return ::testing::AssertionFailure() << "not one line on stderr:\n" << r.err;
  if (r.err.rfind("trainbench: error: ", 0) != 0) return ::testing::AssertionFailure() << "no error prefix: " << r.err;
  for (const auto& f : fragments) {
    if (r.err.find(f) == std::string::npos) return ::testing::AssertionFailure() << "no '" << f << "' in: " << r.err;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace test
}  // namespace trainbench
