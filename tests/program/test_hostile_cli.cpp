// Hostile input through the real binary (issue 12): every run is under `timeout`, so a hang fails the
// test instead of stalling it. Cases are one tiny convnet step or none at all.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli_util.h"
#include "results/journal.h"
#include "results/results_file.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

using namespace test;

const std::string kTiny = "convnet:channels=8,depth=1,image=8:b1:fp32:nchw:cpu";
const std::string kFast = " --warmup 0 --min-steps 2 --min-time 0 --max-time 5 --max-noise 100";

// `trainbench <args>` killed after `seconds`: a hang shows as exit 124, never as a stuck test.
CmdResult run_limited(const std::string& args, const fs::path& dir, int seconds = 60) {
  return run_trainbench(args, dir, RunWith{"", seconds});
}

// Exit 2 and one line on stderr holding every fragment.
void expect_refused(const std::string& args, const std::vector<std::string>& fragments,
                    const std::string& name = "bad") {
  const fs::path dir = temp_dir("hostile_cli", name);
  EXPECT_TRUE(refused(run_limited(args, dir, 30), fragments)) << args;
}

const std::string kRun = "run --model convnet --batch 1 -o /tmp/trainbench_hostile_never.json";

TEST(HostileCli, NonFiniteAndOutOfRangeNumbersNameTheFlagAndValue) {
  expect_refused(kRun + " --max-time nan", {"--max-time", "nan must be a finite number"});
  expect_refused(kRun + " --max-noise nan", {"--max-noise", "nan"});
  expect_refused(kRun + " --min-time inf", {"--min-time", "inf"});
  expect_refused(kRun + " --timeout nan", {"--timeout", "nan"});
  expect_refused(kRun + " --bucket-mb nan", {"--bucket-mb", "nan"});
  expect_refused(kRun + " --max-time 0", {"--max-time", "0 must be > 0"});
  expect_refused(kRun + " --threads 100000", {"--threads", "100000 must be between 0 and 1024"});
  expect_refused("op conv:mb1ic1ih8oc1kh3 --max-time nan", {"--max-time", "nan"});
  expect_refused("explain -m convnet -b 1 --op-time inf", {"--op-time", "inf"});
  expect_refused(kRun + " --memory-limit 1e30G", {"memory limit", "1e30G"});
  // Integer flags too: a short, true range instead of CLI11's "not in range 2.22507e-308 to 1.79769e+308".
  expect_refused("launch --nproc 0 -- run", {"--nproc", "0 must be between 1 and 65536"});
  expect_refused("maxbatch -m convnet --start 0", {"--start", "0 must be between 1 and 1000000000"});
  expect_refused("maxbatch -m convnet --start 64 --max-batch 32", {"--start 64 is above --max-batch 32"});
  EXPECT_FALSE(fs::exists("/tmp/trainbench_hostile_never.json"));
}

TEST(HostileCli, ConflictingLimitsAreRefused) {
  expect_refused(kRun + " --min-steps 10 --max-steps 5", {"--min-steps 10 is above --max-steps 5"});
  expect_refused(kRun + " --min-time 5 --max-time 1", {"--min-time 5 is above --max-time 1"});
  expect_refused("maxbatch -m convnet --min-time 5 --max-time 1", {"--min-time 5 is above --max-time 1"});
  // A suite's limit against a flag: the suite's key is named with its line.
  const fs::path dir = temp_dir("hostile_cli", "suite_conflict");
  std::ofstream(dir / "s.toml") << "[settings]\nmin_time = 8.0\n\n[[group]]\nmodel = \"convnet\"\nbatch = 1\n";
  expect_refused("run --suite " + (dir / "s.toml").string() + " --max-time 2 -o " + (dir / "r.json").string(),
                 {(dir / "s.toml").string() + ":2: min_time 8 is above --max-time 2"});
}

TEST(HostileCli, SuiteErrorsPointAtTheLineOfTheKey) {
  const fs::path dir = temp_dir("hostile_cli", "suite_line");
  std::ofstream(dir / "s.toml") << "[[group]]\nmodel = \"convnet\"\nbatch = 1\nprecision = \"fp64\"\n";
  expect_refused("run --suite " + (dir / "s.toml").string(), {(dir / "s.toml").string() + ":4:", "fp64"});
  std::ofstream(dir / "t.toml") << "[[group]]\nmodel = \"bert\"\nbatch = 1\n\nset = { hidden = 100 }\n";
  expect_refused("run --suite " + (dir / "t.toml").string(), {(dir / "t.toml").string() + ":5:", "heads"});
  std::ofstream(dir / "u.toml")
      << "[settings]\nwarmup = 1\nmax_time = nan\n[[group]]\nmodel = \"convnet\"\nbatch = 1\n";
  expect_refused("run --suite " + (dir / "u.toml").string(), {(dir / "u.toml").string() + ":3: max_time: nan"});
}

TEST(HostileCli, WorkloadParametersAndCommandLineMistakesAreRefusedUpFront) {
  expect_refused("run --model bert --set hidden=100 --batch 1", {"heads 12 does not divide hidden 100"});
  expect_refused("run --model bert --set seq=600 --batch 1", {"seq 600 exceeds max_pos 512"});
  expect_refused("run --model convnet --batch auto,2", {"auto cannot be combined with sizes"});
  expect_refused("frobnicate", {"unknown command 'frobnicate'; see trainbench --help"});
  expect_refused("run --case " + kTiny + " --threads 4", {"--threads does not apply to --case cases"});
  expect_refused("run --case " + kTiny + " --precision bf16", {"--precision does not apply to --case cases"});
  expect_refused("run --suite quick --batch 4", {"--batch does not apply to --suite cases"});
  expect_refused("run --case " + kTiny + " --device cpu", {"--device does not apply to --case cases"});
  expect_refused("run --case convnet:b8:b16:fp32:cpu", {"'b16' repeats the batch", "column"});
  expect_refused("run --case convnet:b8:fp32:cuda:", {"empty field", "column"});
  // Counts past any sensible folder (a 20-digit count overflowed to something huge and wrote on).
  expect_refused("make-data /tmp/trainbench_never_made --images 99999999999999999999", {"--images"});
  expect_refused("make-data /tmp/trainbench_never_made --images 10 --classes 0", {"--classes"});
  expect_refused("memory --model convnet --fits 1025P", {"at most 1024P"});
}

// --threads (and --precision, --layout, --optimizer, --forward-only) given with --suite apply to its
// groups, per-device overrides included, instead of being silently ignored.
TEST(HostileCli, SettingsFlagsApplyToSuiteCases) {
  const fs::path dir = temp_dir("hostile_cli", "suite_flags");
  std::ofstream(dir / "s.toml") << "[[group]]\nmodel = \"convnet\"\nbatch = 1\nthreads = 2\n"
                                   "set = { channels = 8, depth = 1, image = 8 }\n[group.cpu]\nthreads = 3\n";
  const CmdResult r = run_limited("run --suite " + (dir / "s.toml").string() + " --device cpu --threads 1" + kFast +
                                      " -o " + (dir / "r.json").string(),
                                  dir, 120);
  ASSERT_EQ(r.code, 0) << r.err;
  const ResultsFile f = read_results((dir / "r.json").string());
  ASSERT_EQ(f.benchmarks.size(), 1u);
  EXPECT_EQ(f.benchmarks[0].name, "convnet:channels=8,depth=1,image=8:b1:fp32:nchw:t1:cpu");
}

TEST(HostileCli, InputsThatAreNotRegularFilesAreRefusedWithoutHanging) {
  const fs::path dir = temp_dir("hostile_cli", "fifo");
  const fs::path fifo = dir / "f.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string good = std::string(TRAINBENCH_TEST_DATA) + "/results_v1.json";
  expect_refused("compare " + fifo.string() + " " + good, {"is not a regular file"});
  expect_refused("compare " + dir.string() + " " + good, {"is a directory"});
  expect_refused("report " + fifo.string() + " -o " + (dir / "r.html").string(), {"is not a regular file"});
  const fs::path fifo_suite = dir / "s.toml";
  ASSERT_EQ(mkfifo(fifo_suite.c_str(), 0600), 0);
  expect_refused("run --suite " + fifo_suite.string(), {"is not a regular file"});
  expect_refused("run --case " + kTiny + " --resume -o " + fifo.string(), {"is not a regular file"});
  // A FIFO where the journal goes: refused naming -o.
  const fs::path out = dir / "out.json";
  ASSERT_EQ(mkfifo((dir / "out.json.journal").c_str(), 0600), 0);
  expect_refused("run --case " + kTiny + " --resume -o " + out.string(),
                 {"-o '" + out.string() + "'", "is not a regular file"});
}

TEST(HostileCli, AnOutputThatIsAnInputIsRefused) {
  const fs::path dir = temp_dir("hostile_cli", "same");
  fs::copy_file(std::string(TRAINBENCH_TEST_DATA) + "/results_v1.json", dir / "a.json");
  const std::string before = slurp(dir / "a.json");
  expect_refused("report " + (dir / "a.json").string() + " -o " + (dir / "a.json").string(),
                 {"same file as the input"});
  expect_refused("compare " + (dir / "a.json").string() + " " + (dir / "a.json").string() + " -o " +
                     (dir / "." / "a.json").string(),
                 {"same file as the input"});
  expect_refused("run --case " + kTiny + " -o " + (dir / "x.json").string() + " --report " + (dir / "x.json").string(),
                 {"--report", "same file as the input"});
  EXPECT_EQ(slurp(dir / "a.json"), before);
}

TEST(HostileCli, ResultsFilesWithImpossibleValuesNameTheFileAndField) {
  const fs::path dir = temp_dir("hostile_cli", "values");
  std::string text = slurp(std::string(TRAINBENCH_TEST_DATA) + "/results_v1.json");
  const auto at = text.find("\"batch_size\": ");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 14, "-");
  std::ofstream(dir / "neg.json") << text;
  const std::string good = std::string(TRAINBENCH_TEST_DATA) + "/results_v1.json";
  expect_refused("compare " + (dir / "neg.json").string() + " " + good,
                 {(dir / "neg.json").string(), "\"batch_size\""});
}

// A run that stays busy: one case measured for 20 s.
pid_t start_slow_run(const fs::path& out) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = std::string("exec timeout -k 5 120 ") + TRAINBENCH_EXE + " run --case " + kTiny +
                            " --warmup 0 --min-steps 100000 --min-time 20 --max-time 20 --max-noise 0 -o " +
                            out.string() + " > /dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

TEST(HostileCli, ASecondRunOnTheSameOutputExitsTwoNamingTheHolder) {
  const fs::path dir = temp_dir("hostile_cli", "lock");
  const fs::path out = dir / "r.json";
  const pid_t first = start_slow_run(out);
  ASSERT_GT(first, 0);
  // `exec timeout ... trainbench`: timeout is the forked pid, trainbench its child. Wait for the journal's
  // header (the lock is held from before it is written).
  bool started = false;
  for (int i = 0; i < 600 && !started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    started = fs::exists(dir / "r.json.journal") && fs::file_size(dir / "r.json.journal") > 0;
  }
  EXPECT_TRUE(started) << "the first run never started its journal";
  const CmdResult second = run_limited("run --case " + kTiny + kFast + " -o " + out.string(), dir, 60);
  EXPECT_TRUE(refused(second, {"is in use by another trainbench run (pid "}));
  // The holder is the trainbench under `timeout`: its pid is a child of `first`.
  const auto p = second.err.find("(pid ");
  if (p != std::string::npos) {
    const long holder = std::atol(second.err.c_str() + p + 5);
    const std::string stat = slurp("/proc/" + std::to_string(holder) + "/stat");  // "pid (comm) S ppid ..."
    const auto close = stat.rfind(") ");
    ASSERT_NE(close, std::string::npos) << "no process " << holder;
    EXPECT_EQ(std::atol(stat.c_str() + close + 4), static_cast<long>(first)) << stat;
    EXPECT_NE(slurp("/proc/" + std::to_string(holder) + "/cmdline").find("trainbench"), std::string::npos);
  }
  kill(first, SIGTERM);  // timeout passes it on: the run stops as interrupted and keeps its journal
  int status = 0;
  waitpid(first, &status, 0);
  // ... and exits as a shell reports a SIGTERM, 128 + 15 (timeout returns its command's code).
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 143) << "status " << status;
  EXPECT_TRUE(fs::exists(dir / "r.json.journal")) << "the first run's journal must survive the second run";
}

// Every command that writes results holds its output's lock: with this process holding the lock a run
// holds on -o (its journal), explain, maxbatch, memory and op on the same -o are each one line, exit 2,
// before measuring; and the file is left as it was. (Before, two explains on one -o both exited 0
// and the first one's results were gone.)
TEST(HostileCli, EveryWriterOfAnOutputTakesItsLock) {
  const fs::path dir = temp_dir("hostile_cli", "writers");
  const fs::path out = dir / "r.json";
  std::ofstream(out) << "kept";
  Journal held;
  held.lock(journal_path_for(out.string()));
  const std::vector<std::string> writers = {
      "explain -m convnet --set channels=8 --set depth=1 --set image=8 -b 1 --device cpu",
      "maxbatch -m convnet --set channels=8 --set depth=1 --set image=8 --device cpu --no-predict",
      "memory -m convnet --set channels=8 --set depth=1 --set image=8 --device cpu", "op conv:mb1ic1ih8oc1kh3"};
  for (const std::string& cmd : writers) {
    const CmdResult r = run_limited(cmd + " -o " + out.string(), dir, 60);
    EXPECT_TRUE(refused(r, {"is in use by another trainbench run"})) << cmd;
    EXPECT_EQ(slurp(out), "kept") << cmd;
  }
}

// Runs started in the same second without -o each write their own default file: eight at once, all
// exit 0, eight results files. (Before, the default name had one-second resolution and all but one
// failed with "journal in use".)
TEST(HostileCli, RunsStartedTogetherWithoutAnOutputEachGetTheirOwn) {
  const fs::path dir = temp_dir("hostile_cli", "together");
  std::string cmd = "cd " + dir.string() + " && pids=; for i in 1 2 3 4 5 6 7 8; do timeout -k 5 120 " +
                    TRAINBENCH_EXE + " run --store none --case " + kTiny + kFast +
                    " > /dev/null 2> err$i.txt & pids=\"$pids $!\"; done; fails=0; for p in $pids;" +
                    " do wait $p || fails=$((fails + 1)); done; exit $fails";
  const int failed = shell("bash -c '" + cmd + "'");
  std::string errs;
  for (int i = 1; i <= 8; ++i) errs += slurp(dir / ("err" + std::to_string(i) + ".txt"));
  EXPECT_EQ(failed, 0) << errs;
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir / "results")) {
    if (e.path().extension() == ".json") {
      ++files;
      EXPECT_EQ(read_results(e.path().string()).benchmarks.size(), 1u) << e.path();
    }
  }
  EXPECT_EQ(files, 8) << errs;
}

// A journal as a run with another plan would have left it: one finished case, --max-time 99.
void write_foreign_journal(const fs::path& journal, const std::string& done_case) {
  PlanIdentity id;
  id.cases = {done_case};
  id.settings = {{"--max-time", "99"}};
  Record r;
  r.name = done_case;
  r.model = "convnet";
  r.params = {{"channels", "8"}, {"depth", "1"}, {"image", "8"}};
  r.batch_size = 1;
  r.device = "cpu";
  r.precision = "fp32";
  r.layout = "nchw";
  r.optimizer = "sgd";
  r.status = Status::ok;
  r.throughput = 123.25;
  r.step_time_s = {0.01, 0.01, 0.0, 0.01, 0.01, 0.0, 2};
  r.samples_s = {0.01, 0.01};
  Context c;
  c.device = "cpu";
  Journal j;
  j.open(journal.string(), c, Journal::Mode::fresh, id);
  j.append(r);
}

TEST(HostileCli, ResumeWithADifferentPlanIsRefusedUnlessForced) {
  const fs::path dir = temp_dir("hostile_cli", "resume");
  const fs::path out = dir / "r.json";
  write_foreign_journal(dir / "r.json.journal", kTiny);
  const std::string other = "convnet:channels=8,depth=1,image=8:b2:fp32:nchw:cpu";
  const std::string args = "run --case " + kTiny + " --case " + other + kFast + " --resume -o " + out.string();
  const CmdResult r = run_limited(args, dir, 60);
  EXPECT_TRUE(
      refused(r, {"different plan", "--max-time was 99, now 5", "1 case(s) only in this plan (" + other + ")"}));
  EXPECT_FALSE(fs::exists(out));

  const CmdResult forced = run_limited(args + " --force", dir, 120);
  ASSERT_EQ(forced.code, 0) << forced.err;
  const ResultsFile f = read_results(out.string());
  ASSERT_EQ(f.benchmarks.size(), 2u);
  EXPECT_EQ(f.benchmarks[0].name, kTiny);
  EXPECT_EQ(f.benchmarks[0].throughput, 123.25) << "the journal's record is kept as it was";
  EXPECT_EQ(f.benchmarks[1].name, other);
  EXPECT_EQ(f.benchmarks[1].status, Status::ok) << f.benchmarks[1].error;
  ASSERT_TRUE(f.context.resume_note.has_value());
  EXPECT_NE(f.context.resume_note->find("--max-time was 99"), std::string::npos) << *f.context.resume_note;
  expect_refused("run --case " + kTiny + " --force -o " + (dir / "z.json").string(),
                 {"--force only goes with --resume"});
}

TEST(HostileCli, AFreshRunKeepsAnInterruptedRunsJournal) {
  const fs::path dir = temp_dir("hostile_cli", "fresh_over_journal");
  const fs::path journal = dir / "r.json.journal";
  write_foreign_journal(journal, kTiny);
  const std::string before = slurp(journal);
  const CmdResult r = run_limited("run --case " + kTiny + kFast + " -o " + (dir / "r.json").string(), dir, 60);
  EXPECT_TRUE(refused(r, {"interrupted run", "--resume"}));
  EXPECT_EQ(slurp(journal), before) << "the journal's records must be left as they were";
  EXPECT_FALSE(fs::exists(dir / "r.json"));
}

TEST(HostileCli, CompareOfRunsWithNoCaseInCommonSuggestsIgnore) {
  const fs::path dir = temp_dir("hostile_cli", "disjoint");
  ResultsFile a = read_results(std::string(TRAINBENCH_TEST_DATA) + "/results_v1.json");
  ResultsFile b = a;
  for (auto& r : b.benchmarks) r.layout = r.layout == "nchw" ? "nhwc" : "nchw";
  write_results_atomic((dir / "a.json").string(), a);
  write_results_atomic((dir / "b.json").string(), b);
  const CmdResult r = run_limited("compare " + (dir / "a.json").string() + " " + (dir / "b.json").string(), dir, 30);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("no case in common"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("try --ignore layout"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trainbench
