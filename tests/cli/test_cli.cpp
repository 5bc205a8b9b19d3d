// End-to-end tests of the trainbench binary: exit codes, isolation, OOM, journals, resume.
// Cases use mobilenet_v2 at tiny batches with a very short stopping rule to stay fast.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "results/journal.h"
#include "results/results_file.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

const std::string kFast =
    " --warmup 1 --min-steps 2 --min-time 0 --max-time 3 --max-noise 100";  // max-time: room for 2 steps on a loaded
                                                                            // machine

using namespace test;

void expect_bad_input(const std::string& args, const std::string& fragment) {
  const fs::path dir = temp_dir("cli", "bad");
  const CmdResult r = run_trainbench(args + " -o " + (dir / "r.json").string(), dir);
  EXPECT_TRUE(refused(r, {fragment})) << args;
  EXPECT_FALSE(fs::exists(dir / "r.json")) << "nothing may run on bad input";
  EXPECT_FALSE(fs::exists(dir / "r.json.journal"));
}

TEST(Cli, BadInputGivesOneLineAndExitTwo) {
  expect_bad_input("run --model resnet51 --batch 8", "resnet51");
  expect_bad_input("run --model resnet18 --batch 0", "0");
  expect_bad_input("run --model resnet18 --batch -3", "-3");
  expect_bad_input("run --model resnet18 --batch 8 --precision fp64", "fp64");
  expect_bad_input("run --model resnet18 --batch 8 --layout nwhc", "nwhc");
  expect_bad_input("run --model resnet18 --batch 8 --device tpu", "tpu");
  if (!torch::cuda::is_available()) expect_bad_input("run --model resnet18 --batch 8 --device cuda:0", "cuda:0");
  expect_bad_input("run --model resnet18 --batch 8 --format xml", "xml");
  expect_bad_input("run --model resnet18 --batch 8 --memory-limit lots", "lots");
  expect_bad_input("run --model resnet18 --batch 8 --bogus-flag", "bogus-flag");
  expect_bad_input("run --case resnet18:b8:fp64:cpu", "fp64");
  expect_bad_input("run --suite no_such_suite", "no_such_suite");
}

TEST(Cli, UnwritableOutputIsBadInput) {
  const fs::path dir = temp_dir("cli", "unwritable");
  const CmdResult r = run_trainbench("run --model resnet18 --batch 1 -o /proc/trainbench/r.json", dir);
  EXPECT_TRUE(refused(r, {"/proc/trainbench/r.json"}));
}

TEST(Cli, OomUnderMemoryLimitIsADashAndTheSweepGoesOn) {
  const fs::path dir = temp_dir("cli", "oom");
  const fs::path out = dir / "r.json";
  // b512 needs gigabytes of activations; b1 fits in the limit. The OOM case runs first.
  const CmdResult r = run_trainbench(
      "run --case mobilenet_v2:b512:fp32:nchw:cpu --case mobilenet_v2:b1:fp32:nchw:cpu"
      " --memory-limit 1G" +
          kFast + " -o " + out.string(),
      dir);
  EXPECT_EQ(r.code, 0) << r.err;
  const ResultsFile f = read_results(out.string());
  ASSERT_EQ(f.benchmarks.size(), 2u);
  EXPECT_EQ(f.benchmarks[0].status, Status::oom) << f.benchmarks[0].error;
  EXPECT_EQ(f.benchmarks[1].status, Status::ok) << f.benchmarks[1].error;
  EXPECT_GT(f.benchmarks[1].throughput, 0.0);
  // The live table shows the OOM row with '-' for throughput.
  std::istringstream lines(r.out);
  std::string line, oom_line;
  while (std::getline(lines, line)) {
    if (line.find("b512") != std::string::npos || line.find("512") != std::string::npos) oom_line = line;
  }
  ASSERT_FALSE(oom_line.empty()) << r.out;
  EXPECT_NE(oom_line.find(" - "), std::string::npos) << oom_line;
  EXPECT_FALSE(fs::exists(dir / "r.json.journal")) << "a finished run folds its journal into the results";
}

TEST(Cli, MeasuredRecordHasEveryNumber) {
  const fs::path dir = temp_dir("cli", "ok");
  const fs::path out = dir / "r.json";
  const CmdResult r = run_trainbench(
      "run --model mobilenet_v2 --batch 2 --device cpu --threads 1" + kFast + " -o " + out.string(), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const ResultsFile f = read_results(out.string());
  ASSERT_EQ(f.benchmarks.size(), 1u);
  const Record& b = f.benchmarks[0];
  EXPECT_EQ(b.name, "mobilenet_v2:b2:fp32:nchw:t1:cpu");
  EXPECT_EQ(b.status, Status::ok) << b.error;
  EXPECT_EQ(b.threads, 1);
  EXPECT_GE(b.step_time_s.n, 2);
  EXPECT_EQ(static_cast<size_t>(b.step_time_s.n), b.samples_s.size());
  EXPECT_NEAR(b.throughput, 2.0 / b.step_time_s.median, 1e-9 * b.throughput);
  EXPECT_EQ(b.parameters, 3504872);
  // mobilenet_v2 forward is ~0.30 GMACs = ~0.60 GFLOPs per image; training ~3x (the stem has no
  // backward-data), batch 2.
  EXPECT_NEAR(b.flops_per_step / (3 * 2 * 0.6e9), 1.0, 0.1);
  EXPECT_GT(b.peak_memory_bytes, 10 << 20);
  EXPECT_GT(b.wall_time_s, 0.0);
  EXPECT_EQ(f.context.threads > 0, true);
}

TEST(Cli, KilledRunKeepsItsJournalAndResumeRunsOnlyTheRest) {
  const fs::path dir = temp_dir("cli", "kill");
  const fs::path out = dir / "r.json";
  const fs::path journal = dir / "r.json.journal";
  const std::string cases =
      "run --case mobilenet_v2:b1:fp32:nchw:cpu --case mobilenet_v2:b2:fp32:nchw:cpu"
      " --case mobilenet_v2:b3:fp32:nchw:cpu";
  // The runner in the background; kill -9 once the journal holds a finished case.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string cmd = std::string("exec ") + TRAINBENCH_EXE + " " + cases +
                            " --warmup 1 --min-steps 3 --min-time 0 --max-time 1 --max-noise 0 -o " + out.string() +
                            " > /dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  bool have_one = false;
  for (int i = 0; i < 600 && !have_one; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (fs::exists(journal)) have_one = read_journal(journal.string()).records.size() >= 1;
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(have_one) << "no case reached the journal";
  const JournalContents j = read_journal(journal.string());
  ASSERT_GE(j.records.size(), 1u);
  ASSERT_LT(j.records.size(), 3u) << "killed too late to test resume";
  EXPECT_TRUE(j.context.has_value());
  EXPECT_EQ(j.records[0].name, "mobilenet_v2:b1:fp32:nchw:cpu");
  EXPECT_EQ(j.records[0].status, Status::ok);

  // The same plan as the killed run (its cases and settings): --resume refuses another one.
  const CmdResult r = run_trainbench(
      cases + " --resume --warmup 1 --min-steps 3 --min-time 0 --max-time 1 --max-noise 0 -o " + out.string(), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("already measured"), std::string::npos) << r.err;
  const ResultsFile f = read_results(out.string());
  ASSERT_EQ(f.benchmarks.size(), 3u);
  EXPECT_EQ(f.benchmarks[0].name, "mobilenet_v2:b1:fp32:nchw:cpu");
  // The first case was not measured again: its samples are the journal's (a run of at least 1 s).
  EXPECT_EQ(f.benchmarks[0].samples_s, j.records[0].samples_s);
  for (const auto& b : f.benchmarks) EXPECT_EQ(b.status, Status::ok) << b.name << ": " << b.error;
}

// A journal that cannot take a case (a full disk: here a file-size limit, RLIMIT_FSIZE, set just above
// the journal's header so that its first record does not fit; SIGXFSZ ignored so that the write fails
// with EFBIG as one to a full disk fails with ENOSPC) loses nothing measured: every case is printed, the
// sweep goes on, the reason is named once, and the journal is left ending cleanly for --resume. The
// results file does not fit either: one line says so and where the cases are.
TEST(Cli, AJournalThatCannotBeWrittenLosesNoMeasuredCase) {
  const fs::path dir = temp_dir("cli", "journalfull");
  const std::string cases = "run --case mobilenet_v2:b1:fp32:nchw:cpu --case mobilenet_v2:b2:fp32:nchw:cpu" + kFast;
  // The size of the journal's header and of a record, from a run without a limit: the header is
  // written before the first case starts, and read here while the run goes on.
  const fs::path sized = dir / "sizes.json", sized_journal = dir / "sizes.json.journal";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string cmd =
        std::string("exec ") + TRAINBENCH_EXE + " " + cases + " -o " + sized.string() + " > /dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  size_t header_bytes = 0;
  for (int i = 0; i < 3000 && header_bytes == 0; ++i) {
    std::ifstream in(sized_journal);
    std::string line;
    if (std::getline(in, line) && !in.eof()) header_bytes = line.size() + 1;  // a whole line, newline included
    if (header_bytes == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_GT(header_bytes, 0u) << "the journal's header was not seen";
  const ResultsFile sizes = read_results(sized.string());
  const size_t record_bytes = to_json(sizes.benchmarks.at(0)).dump().size();
  // The limit lets the header in (with room for a context a few bytes longer) and keeps the first
  // record out; the results file, the context and both records, is over it too.
  const size_t limit = header_bytes + record_bytes / 2;
  const fs::path out = dir / "r.json";
  // --no-store: the store's file is over the limit too, and this test is about the journal.
  const int code = shell("cd " + dir.string() + " && sh -c \"trap '' XFSZ; exec prlimit --fsize=" +
                         std::to_string(limit) + " " + TRAINBENCH_EXE + " " + cases + " --no-store -o " + out.string() +
                         "\" > stdout.txt 2> stderr.txt < /dev/null");
  const std::string said_out = slurp(dir / "stdout.txt"), said_err = slurp(dir / "stderr.txt");
  EXPECT_EQ(code, 1) << said_err;
  // Both cases were measured and printed, the second after the journal failed.
  EXPECT_NE(said_out.find("mobilenet_v2"), std::string::npos) << said_out;
  const std::string reason = "cannot write journal: File too large";
  ASSERT_NE(said_err.find(reason), std::string::npos) << said_err;
  EXPECT_EQ(said_err.find(reason), said_err.rfind(reason)) << "named once: " << said_err;
  EXPECT_NE(said_err.find("the 2 case(s) measured are in the table above"), std::string::npos) << said_err;
  EXPECT_FALSE(fs::exists(out));
  // The journal ends cleanly: its header, and no part of a record.
  const JournalContents j = read_journal((dir / "r.json.journal").string());
  EXPECT_TRUE(j.context.has_value());
  EXPECT_TRUE(j.records.empty());
  fs::remove_all(dir);
}

// `list` keeps its counts in $TRAINBENCH_CACHE_DIR: a scratch one per test, not the user's.
struct CacheDirScope {
  explicit CacheDirScope(const fs::path& dir) { setenv("TRAINBENCH_CACHE_DIR", dir.c_str(), 1); }
  ~CacheDirScope() { unsetenv("TRAINBENCH_CACHE_DIR"); }
};

TEST(Cli, ListShowsEveryModelWithItsParameterCount) {
  const fs::path dir = temp_dir("cli", "list");
  const CacheDirScope cache(dir / "cache");
  const CmdResult r = run_trainbench("list", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* m :
       {"alexnet", "vgg11", "vgg16", "vgg19", "googlenet", "inception3", "inception4", "resnet18", "resnet34",
        "resnet50", "resnet101", "resnet152", "resnet50_v2", "mobilenet_v1", "mobilenet_v2", "densenet121"}) {
    EXPECT_NE(r.out.find(std::string("\n") + m + " "), std::string::npos) << m;
  }
  EXPECT_NE(r.out.find("25,557,032"), std::string::npos);  // resnet50
  // gpt at its default size, GPT-2 small: Hugging Face's GPT2LMHeadModel (test_gpt.cpp derives it), and
  // the other sizes named in its parameters.
  EXPECT_NE(r.out.find("\ngpt "), std::string::npos);
  EXPECT_NE(r.out.find("124,439,808"), std::string::npos);
  EXPECT_NE(r.out.find("--set size=small  GPT-2 size: small (L12 H768), medium (L24 H1024)"), std::string::npos);
  EXPECT_NE(r.out.find("quick"), std::string::npos);
  EXPECT_NE(r.out.find("llm"), std::string::npos);
}

// The counts, against references derived by hand, and a second listing read from the cache. Per image
// or sequence: alexnet 61,100,840 parameters (torchvision), 1.43 GFLOP forward, 4.14 training (3 x 1.428
// less conv1's backward-data 0.141: test_models.cpp derives both); resnet50_v2 25,549,480 and 7.72
// forward (test_models.cpp), training 3 x 7.716 - 2 x 0.118 (the stem's backward-data) = 22.9; BERT-Base
// pre-training 110,106,428 (Hugging Face's BertForPreTraining).
TEST(Cli, ListCountsModelsFromShapesAndAnswersFastFromItsCache) {
  const fs::path dir = temp_dir("cli", "list_cache");
  const CacheDirScope cache(dir / "cache");
  const CmdResult cold = run_trainbench("list alexnet resnet50_v2 bert", dir);
  ASSERT_EQ(cold.code, 0) << cold.err;
  auto row = [&](const std::string& out, const std::string& model) {
    const size_t at = out.find("\n" + model + " ");
    return at == std::string::npos ? std::string() : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  };
  for (const auto& [model, numbers] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"alexnet", {" 61,100,840 ", " 1.43 ", " 4.14 "}},
           {"resnet50_v2", {" 25,549,480 ", " 7.72 ", " 22.9 "}},
           {"bert", {" 110,106,428 "}}}) {
    const std::string line = row(cold.out, model);
    ASSERT_FALSE(line.empty()) << model << " missing from:\n" << cold.out;
    for (const auto& n : numbers) EXPECT_NE(line.find(n), std::string::npos) << model << ": " << n << " in " << line;
  }
  EXPECT_EQ(cold.out.find("\nsuite"), std::string::npos) << "named models only";
  EXPECT_TRUE(fs::exists(dir / "cache" / "counts.json"));

  const auto start = std::chrono::steady_clock::now();
  const CmdResult warm = run_trainbench("list alexnet resnet50_v2 bert", dir);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(warm.code, 0) << warm.err;
  EXPECT_EQ(warm.out, cold.out);
  EXPECT_LT(seconds, 5.0) << "a cached listing builds no model (generous bound for a busy machine)";

  const CmdResult bad = run_trainbench("list resnet51", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("resnet51"), std::string::npos);
}

}  // namespace
}  // namespace trainbench
