// End-to-end data parallelism through the binary: `launch` of two workers of a tiny convnet over
// loopback, a killed worker, bad torchrun variables, and the all-reduce micro-benchmark.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "cli_util.h"
#include "results/results_file.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

using namespace test;

const std::string kTiny = " --model convnet --set channels=4 --set depth=1 --set image=8 --batch 2";
const std::string kFast = " --warmup 1 --min-steps 3 --min-time 0 --max-time 1 --max-noise 100";

// Runs `trainbench <args>` with `env` as the only torchrun variables set.
CmdResult run_with_env(const std::string& env, const std::string& args, const fs::path& dir) {
  const RunWith with{"-u RANK -u WORLD_SIZE -u LOCAL_RANK -u LOCAL_WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT " + env};
  return run_trainbench(args, dir, with);
}

TEST(DistCli, TwoWorkersTrainAndReportScaling) {
  const fs::path dir = temp_dir("dist", "two");
  const fs::path out = dir / "r.json";
  const CmdResult r = run_trainbench(
      "launch --nproc 2 -- run" + kTiny + " --dist --dist-timeout 60" + kFast + " -o " + out.string(), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const ResultsFile f = read_results(out.string());
  EXPECT_EQ(f.context.world_size, 2);
  EXPECT_EQ(f.context.dist_backend, std::optional<std::string>("gloo"));
  ASSERT_EQ(f.benchmarks.size(), 1u);
  const Record& rec = f.benchmarks[0];
  ASSERT_TRUE(rec.ok()) << rec.error;
  ASSERT_TRUE(rec.dist.has_value());
  EXPECT_EQ(rec.dist->world_size, 2);
  EXPECT_EQ(rec.dist->backend, "gloo");
  EXPECT_EQ(rec.dist->rank_step_time_s.size(), 2u);
  EXPECT_GE(rec.dist->buckets, 1);
  EXPECT_GT(rec.dist->single_process_throughput, 0.0);
  EXPECT_TRUE(std::isfinite(rec.dist->scaling_efficiency));
  EXPECT_GT(rec.dist->scaling_efficiency, 0.0);
  EXPECT_GE(rec.dist->comm_share, 0.0);
  EXPECT_LT(rec.dist->comm_share, 1.0);
  EXPECT_TRUE(std::isfinite(rec.dist->comm_total_share));
  EXPECT_GT(rec.dist->comm_total_share, 0.0);
  EXPECT_LE(rec.dist->comm_total_share, 1.0);
  // The rank's memory breakdown: the all-reduce buckets hold every trainable parameter's gradient once
  // more, flattened: 4 bytes (fp32) x the record's parameter count; the gradients themselves are as many
  // bytes again, read from their storage (the allocator's reading after the backward once also held the
  // all-reduce's temporaries, not yet freed by gloo's threads: 2020 bytes where 1008 were the gradients).
  ASSERT_TRUE(rec.memory.has_value());
  EXPECT_EQ(rec.memory->comm_buffer_bytes, 4 * rec.parameters);
  EXPECT_EQ(rec.memory->gradients_bytes, 4 * rec.parameters);
  EXPECT_EQ(rec.memory->fixed_bytes, rec.memory->parameters_bytes + rec.memory->gradients_bytes +
                                         rec.memory->optimizer_bytes + rec.memory->comm_buffer_bytes);
  // Global throughput: both ranks' samples over the slowest rank's median.
  EXPECT_NEAR(rec.throughput, 2.0 * 2 / rec.step_time_s.median, 1e-6 * rec.throughput);
  // Only rank 0 prints the table: one header, one row.
  EXPECT_NE(r.out.find("convnet"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("trainbench: error"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("scaling efficiency"), std::string::npos) << r.out;
}

// The pids of `parent`'s children whose environment holds `var`.
std::vector<pid_t> children_with_env(pid_t parent, const std::string& var) {
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid != parent) continue;
    const std::string env = slurp(entry.path() / "environ");
    if (("\n" + env).find(std::string(1, '\0') + var + '\0') != std::string::npos || env.rfind(var + '\0', 0) == 0) {
      found.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return found;
}

// Starts `trainbench launch ...` (`args` after the program) with stdin and stdout on /dev/null and
// stderr in `err_path`; returns its pid.
pid_t start_launch(const std::string& err_path, std::vector<std::string> args) {
  args.insert(args.begin(), TRAINBENCH_EXE);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_RDWR);
    const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(err_fd, 2);
    execv(TRAINBENCH_EXE, argv.data());
    _exit(127);
  }
  return pid;
}

TEST(DistCli, KilledWorkerStopsTheOthersWithOneClearLine) {
  const fs::path dir = temp_dir("dist", "kill");
  const std::string err_path = (dir / "stderr.txt").string();
  const std::string out = (dir / "r.json").string();
  // clang-format off
  const pid_t launcher = start_launch(err_path, {
      "launch", "--nproc", "2", "--grace", "5", "--", "run", "--model", "convnet", "--set", "channels=4", "--set",
      "depth=1", "--set", "image=8", "--batch", "2", "--dist", "--no-baseline", "--dist-timeout", "20", "--warmup",
      "1", "--min-time", "60", "--max-time", "120", "-o", out});
  // clang-format on
  ASSERT_GE(launcher, 0);
  // Wait until rank 1's worker is up and measuring, then kill it as a crash would.
  std::vector<pid_t> rank1;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    rank1 = children_with_env(launcher, "RANK=1");
    if (!rank1.empty() && slurp(err_path).find("[case 1 of 1") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(rank1.size(), 1u) << slurp(err_path);
  const std::vector<pid_t> rank0 = children_with_env(launcher, "RANK=0");
  ASSERT_EQ(rank0.size(), 1u);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // into the case's rendezvous or steps
  kill(rank1[0], SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  int status = 0;
  while (waitpid(launcher, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() - killed > std::chrono::seconds(40)) {
      kill(launcher, SIGKILL);
      waitpid(launcher, &status, 0);
      FAIL() << "the launcher hung after a worker died:\n" << slurp(err_path);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
  EXPECT_LT(took, 20.0);
  const std::string err = slurp(err_path);
  EXPECT_NE(err.find("trainbench: error: rank 1 was killed by signal 9"), std::string::npos) << err;
  // The launcher's error is its last line.
  const auto last = err.substr(err.rfind('\n', err.size() - 2) + 1);
  EXPECT_EQ(last.rfind("trainbench: error: rank 1", 0), 0u) << err;
  // Nothing of the job is left running (the launcher reaped rank 0: its pid is gone).
  EXPECT_NE(kill(rank0[0], 0), 0);
}

// A stalled rank: rank 1's case child is stopped (SIGSTOP) during case 2 of 3. Rank 0's collective
// fails at --dist-timeout; rank 1's runner reads that from the store and kills its stopped child at
// once (before, it waited for it until --timeout, and case 3 failed too with "Socket Timeout" as rank
// 1 never joined it). Case 2's record names the stuck rank and what it was doing; case 3 is measured.
TEST(DistCli, AStalledRankEndsItsCaseOnEveryRankAndTheNextCaseRuns) {
  const fs::path dir = temp_dir("dist", "stall");
  const std::string err_path = (dir / "stderr.txt").string();
  const std::string out = (dir / "r.json").string();
  // clang-format off
  const pid_t launcher = start_launch(err_path, {
      "launch", "--nproc", "2", "--grace", "5", "--", "run", "--model", "convnet", "--set", "channels=4", "--set",
      "depth=1", "--set", "image=8", "--batch", "2,3,4", "--dist", "--no-baseline", "--dist-timeout", "5",
      "--warmup", "1", "--min-steps", "3", "--min-time", "2", "--max-time", "3", "--max-noise", "100", "-o", out});
  // clang-format on
  ASSERT_GE(launcher, 0);
  // Rank 1's runner, then its case child once case 2 has started.
  std::vector<pid_t> child;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    const std::vector<pid_t> runner = children_with_env(launcher, "RANK=1");
    if (runner.size() == 1 && slurp(err_path).find("[case 2 of 3") != std::string::npos) {
      child = children_with_env(runner[0], "RANK=1");
      if (child.size() == 1) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(child.size(), 1u) << slurp(err_path);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // into the rendezvous or the steps
  ASSERT_EQ(kill(child[0], SIGSTOP), 0);
  const auto stopped = std::chrono::steady_clock::now();
  int status = 0;
  while (waitpid(launcher, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() - stopped > std::chrono::seconds(90)) {
      kill(child[0], SIGKILL);
      kill(launcher, SIGKILL);
      waitpid(launcher, &status, 0);
      FAIL() << "the job hung after a rank stalled:\n" << slurp(err_path);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(kill(child[0], 0), 0) << "the stopped child is still there";
  const ResultsFile f = read_results(out);
  ASSERT_EQ(f.benchmarks.size(), 3u) << slurp(err_path);
  EXPECT_TRUE(f.benchmarks[0].ok()) << f.benchmarks[0].error;
  const Record& stalled = f.benchmarks[1];
  EXPECT_EQ(stalled.status, Status::error);
  EXPECT_NE(stalled.error.find("rank 1's case child was stopped by a signal (SIGSTOP or SIGTSTP) and was killed"),
            std::string::npos)
      << stalled.error;
  // The case ended within --dist-timeout of the stall, plus the child's start and its steps.
  EXPECT_LT(stalled.wall_time_s, 5.0 + 10.0) << stalled.error;
  EXPECT_TRUE(f.benchmarks[2].ok()) << f.benchmarks[2].error << "\n" << slurp(err_path);
}

TEST(DistCli, BadTorchrunVariablesAreOneLineAndExitTwo) {
  const fs::path dir = temp_dir("dist", "env");
  const std::string args = "run" + kTiny + " --dist -o " + (dir / "r.json").string();
  struct Bad {
    std::string env, fragment;
  };
  for (const Bad& b :
       {Bad{"", "--dist needs a launcher's variables"},
        Bad{"RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1", "--dist needs MASTER_PORT"},
        Bad{"RANK=x WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500", "RANK='x' is not a number"},
        Bad{"RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500", "RANK=2 is not below WORLD_SIZE=2"},
        Bad{"RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=99999", "MASTER_PORT=99999"}}) {
    const CmdResult r = run_with_env(b.env, args, dir);
    EXPECT_TRUE(refused(r, {b.fragment})) << b.env;
    EXPECT_FALSE(fs::exists(dir / "r.json"));
  }
  // The launcher's own options.
  for (const auto& [args2, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"launch --nproc 2 --nnodes 2 -- run" + kTiny + " --dist", "needs --master"},
           {"launch --nproc 2 --nnodes 2 --node-rank 2 --master h:1 -- run --dist", "--node-rank 2"},
           {"launch --nproc 2 --master nohost -- run --dist", "HOST:PORT"},
           // The workers' command: a run needs --dist (not the journal lock the second worker would meet),
           // no launch inside a launch, and only run or op.
           {"launch --nproc 2 -- run" + kTiny, "the workers' run has no --dist"},
           {"launch --nproc 2 -- launch --nproc 2 -- run --dist", "launch cannot be nested"},
           {"launch --nproc 2 -- explain --model convnet", "not 'explain'"}}) {
    const CmdResult r = run_with_env("", args2, dir);
    EXPECT_TRUE(refused(r, {fragment})) << args2;
  }
  // Inside a launched (or torchrun) worker, whose environment holds LOCAL_RANK and WORLD_SIZE.
  EXPECT_TRUE(refused(run_with_env("LOCAL_RANK=0 WORLD_SIZE=2", "launch --nproc 2 -- run" + kTiny + " --dist", dir),
                      {"launch cannot be nested"}));
}

TEST(DistCli, AllreduceBandwidthOverLoopback) {
  const fs::path dir = temp_dir("dist", "allreduce");
  const CmdResult r =
      run_trainbench("launch --nproc 2 -- op allreduce:100K allreduce:1M --min-time 0 --max-time 1", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("allreduce:100K"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("allreduce:1M"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("busbw GB/s"), std::string::npos) << r.out;
  EXPECT_EQ(count_lines(r.out), 3) << "rank 0 alone prints: header and two rows\n" << r.out;
}

}  // namespace
}  // namespace trainbench
