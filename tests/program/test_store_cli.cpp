// The results store from the command line, with real processes: a run is kept and exports to its own
// results file byte for byte; bad stores are one line and exit 2 with nothing measured lost; compare and
// report read stored runs; writers at once lose nothing; a killed write leaves no half run; an
// interrupted run is stored and its resume completes it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli_util.h"
#include "results/journal.h"
#include "results/results_file.h"
#include "store/store.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

using namespace test;

const std::string kData = TRAINBENCH_TEST_DATA;
const std::string kFast = " --warmup 1 --min-steps 2 --min-time 0 --max-time 3 --max-noise 100";
const std::string kTiny = "run --case convnet:b2:fp32:nchw:cpu" + kFast;

// The runs in a store, through the command line.
nlohmann::json listed(const fs::path& store, const fs::path& dir) {
  const CmdResult r = run_trainbench("store list --format json --store " + store.string(), dir);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::array();
}

// report_cpu.json under another start time: a distinct run of the same cases.
fs::path variant(const fs::path& dir, int i, size_t cases = 0) {
  ResultsFile f = read_results(kData + "/report_cpu.json");
  f.context.start_time = fmt::format("2026-02-{:02d}T{:02d}:{:02d}:00Z", 1 + i / 600, (i / 60) % 10, i % 60);
  const size_t n = f.benchmarks.size();
  for (size_t k = n; k < cases; ++k) {
    f.benchmarks.push_back(f.benchmarks[k % n]);
    f.benchmarks.back().name += fmt::format(":copy{}", k);
  }
  const fs::path p = dir / fmt::format("v{}.json", i);
  write_results_atomic(p.string(), f);
  return p;
}

// `trainbench` itself loads no LibTorch (a ctest checks its ldd): compare, report, devices, store and
// board run in it, every other command in trainbench-torch beside it. Copied alone into a folder, without
// trainbench-torch, the program still lists, shows and exports a store's runs, compares and reports
// stored runs, draws the board and lists the catalogue, while `run` and a board with --predict (whose
// columns build models) say in one line that the program they are handed to is missing. (Handing any of
// the others over too fails here.)
TEST(StoreCli, ReadingCommandsRunInTheProgramThatLoadsNoLibTorch) {
  const fs::path dir = temp_dir("storecli", "front");
  const fs::path alone = dir / "alone" / "trainbench";
  fs::create_directories(alone.parent_path());
  fs::copy_file(TRAINBENCH_EXE, alone);
  const fs::path store = dir / "s.sqlite";
  const auto front = [&](const std::string& args) { return run_program(alone.string(), args, dir); };
  CmdResult r = front("store import " + kData + "/report_cpu.json --store " + store.string());
  ASSERT_EQ(r.code, 0) << r.err;
  r = front("store list --format json --store " + store.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).size(), 1u) << r.out;
  r = front("store export 1 --store " + store.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["benchmarks"].size(),
            read_results(kData + "/report_cpu.json").benchmarks.size());
  r = front("devices --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out).empty());
  EXPECT_TRUE(refused(front("store list --store ''"), {"--store"}));
  // A second run of the same cases, 1.5 times as fast: compare, report and board read both.
  ResultsFile faster = read_results(kData + "/report_cpu.json");
  faster.context.start_time = "2026-03-01T00:00:00Z";
  for (auto& b : faster.benchmarks) b.throughput *= 1.5;
  write_results_atomic((dir / "faster.json").string(), faster);
  ASSERT_EQ(front("store import " + (dir / "faster.json").string() + " --store " + store.string()).code, 0);
  r = front("compare store:run=1 store:run=2 --format json --store " + store.string());
  ASSERT_EQ(r.code, 0) << r.err;
  // Every case measured in both (the fixture's ok records) at 1.5 times the throughput.
  size_t ok = 0, compared = 0;
  for (const auto& b : faster.benchmarks) ok += b.ok() ? 1 : 0;
  const auto cmp = nlohmann::json::parse(r.out);
  for (const auto& c : cmp["comparisons"][0]["cases"]) {
    if (c["ratio"].is_null()) continue;
    ++compared;
    EXPECT_NEAR(c["ratio"].get<double>(), 1.5, 1e-9) << c.dump();
  }
  EXPECT_EQ(compared, ok) << r.out;
  r = front("report store:run=1 store:run=2 -o " + (dir / "r.html").string() + " --store " + store.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(slurp(dir / "r.html").find("trainbench report"), std::string::npos);
  r = front("board --format json --store " + store.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["rows"].size(), read_results(kData + "/report_cpu.json").benchmarks.size());
  EXPECT_TRUE(refused(front("board --predict h100 --store " + store.string()), {"--predict: unknown device 'h100'"}));
  for (const std::string& handed : std::vector<std::string>{"run --case convnet:b2:fp32:nchw:cpu",
                                                            "board --predict t4 --store " + store.string()}) {
    r = front(handed);
    EXPECT_EQ(r.code, 1) << handed;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("cannot start " + (alone.parent_path() / "trainbench-torch").string()), std::string::npos)
        << r.err;
  }
  fs::remove_all(dir);
}

TEST(StoreCli, ARunIsKeptAndExportsToItsOwnResultsFile) {
  const fs::path dir = temp_dir("storecli", "kept");
  const fs::path store = dir / "s.sqlite", out = dir / "r.json";
  CmdResult r = run_trainbench(kTiny + " -o " + out.string() + " --store " + store.string(), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("stored as run 1 in " + store.string()), std::string::npos) << r.err;
  r = run_trainbench("store export 1 --store " + store.string(), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, slurp(out));  // byte for byte: compare and report read it as the file
  r = run_trainbench("store import " + out.string() + " --store " + store.string(), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("already stored as run 1"), std::string::npos) << r.out;
  // --no-store keeps nothing; TRAINBENCH_STORE chooses the store when --store is not given.
  r = run_trainbench(kTiny + " -o " + (dir / "n.json").string() + " --no-store --store " + store.string(), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("stored"), std::string::npos) << r.err;
  EXPECT_EQ(listed(store, dir).size(), 1u);
  r = run_trainbench(kTiny + " -o " + (dir / "e.json").string(), dir, {"TRAINBENCH_STORE=" + store.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(listed(store, dir).size(), 2u);
  // Without either, the default store under $XDG_DATA_HOME.
  r = run_trainbench(kTiny + " -o " + (dir / "x.json").string(), dir,
                     {"-u TRAINBENCH_STORE XDG_DATA_HOME=" + (dir / "xdg").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "xdg" / "trainbench" / "results.sqlite")) << r.err;
}

TEST(StoreCli, BadStoresAreOneLineAndExit2AndLoseNothingMeasured) {
  const fs::path dir = temp_dir("storecli", "bad");
  std::ofstream(dir / "garbage.sqlite") << std::string(4096, 'x');
  // Refused before anything runs: no results file.
  CmdResult r = run_trainbench(kTiny + " -o " + (dir / "r.json").string() + " --store " + (dir / "garbage.sqlite").string(), dir);
  EXPECT_TRUE(refused(r, {"garbage.sqlite: not a readable store"}));
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  r = run_trainbench("store list --store " + (dir / "garbage.sqlite").string(), dir);
  EXPECT_TRUE(refused(r, {"not a readable store"}));
  // A file that is not a results file: nothing of the files given is added.
  std::ofstream(dir / "bad.json") << "{\"schema_version\": 1}";
  r = run_trainbench("store import " + kData + "/report_cpu.json " + (dir / "bad.json").string() + " --store " +
                         (dir / "s.sqlite").string(),
                     dir);
  EXPECT_TRUE(refused(r, {"bad.json"}));
  EXPECT_EQ(listed(dir / "s.sqlite", dir).size(), 0u);
  // An empty --store is refused (not the default store); a query that matches no run and a date
  // that is not one are refused where they enter.
  r = run_trainbench("store list --store ''", dir);
  EXPECT_TRUE(refused(r, {"empty store name"}));
  ASSERT_EQ(run_trainbench("store import " + kData + "/report_cpu.json --store " + (dir / "q.sqlite").string(), dir).code,
            0);
  for (const char* verb : {"list", "push --to " /* a second store */}) {
    const std::string to = std::string(verb).rfind("push", 0) == 0 ? (dir / "q2.sqlite").string() : "";
    r = run_trainbench(std::string("store ") + verb + to + " machine=nobody --store " + (dir / "q.sqlite").string(), dir);
    EXPECT_TRUE(refused(r, {"matches no run"})) << verb;
  }
  for (const char* since : {"2026-13-45", "2026-02-29", "2026-01-31T24:00", "2026-01-31Tnoon"}) {
    r = run_trainbench(std::string("store list since=") + since + " --store " + (dir / "q.sqlite").string(), dir);
    EXPECT_TRUE(refused(r, {since})) << since;
  }
  // The stored run started 2024-05-01T12:00:00Z: a leap day before it matches it, a date after it none.
  r = run_trainbench("store list since=2024-02-29T23:59:59Z --store " + (dir / "q.sqlite").string(), dir);
  EXPECT_EQ(r.code, 0) << r.err;
  r = run_trainbench("store list since=2024-05-02 --store " + (dir / "q.sqlite").string(), dir);
  EXPECT_TRUE(refused(r, {"matches no run"}));
  for (const char* q : {"store:last=0", "store:colour=red", "store:device=cuda"}) {
    r = run_trainbench(std::string("compare ") + q + " " + kData + "/report_cpu.json --store " + (dir / "s.sqlite").string(),
                       dir);
    EXPECT_TRUE(refused(r, {q})) << q;
  }
  // A server that does not answer: the password is in no message.
  r = run_trainbench("store list --store 'postgresql://bob:Sup3rSecret@127.0.0.1:1/runs'", dir);
  EXPECT_TRUE(refused(r, {"postgresql://bob@127.0.0.1:1/runs", "cannot connect"}));
  EXPECT_EQ(r.err.find("Sup3rSecret"), std::string::npos) << r.err;
  r = run_trainbench(kTiny + " --store 'postgresql://bob:Sup3rSecret@127.0.0.1:1/runs'", dir);
  EXPECT_TRUE(refused(r, {"cannot connect"}));
  // Every other way to spell it: libpq takes the last password= and decodes %70; an unknown key, a
  // bad percent token, an unencoded '/' or a bad option value is echoed by libpq's own messages.
  for (const std::string url : {"postgresql://bob@127.0.0.1:1/runs?password=decoy&password=Sup3rSecret",
                                "postgresql://bob@127.0.0.1:1/runs?%70assword=Sup3rSecret",
                                "postgresql://bob@127.0.0.1:1/runs?PASSWORD=Sup3rSecret",
                                "postgresql://bob:Sup/3rSecret@127.0.0.1:1/runs",
                                "postgresql://bob:Sup3rSecret%zz@127.0.0.1:1/runs",
                                "postgresql://bob@127.0.0.1:1/runs?sslmode=Sup3rSecret"}) {
    r = run_trainbench("store list --store '" + url + "'", dir);
    EXPECT_EQ(r.code, 2) << url << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << url << ": " << r.err;
    EXPECT_EQ(r.err.find("Sup3rSecret"), std::string::npos) << url << ": " << r.err;
    EXPECT_EQ(r.err.find("3rSecret"), std::string::npos) << url << ": " << r.err;
  }
  EXPECT_EQ(r.err.find("Sup3rSecret"), std::string::npos) << r.err;
}

// No output may be a store or an input, however it is spelled: the store itself, ./ in its path, a
// symlink or hard link to it, its -wal or -journal, another SQLite store, a store that does not exist
// yet, the default store of a command that keeps nothing. Each is refused in one line with exit 2
// before anything runs, and the store still holds its run.
TEST(StoreCli, NoOutputIsAStoreOrAnInput) {
  const fs::path dir = temp_dir("storecli", "output_is_store");
  const fs::path store = dir / "s.sqlite", other = dir / "other.sqlite";
  ASSERT_EQ(run_trainbench("store import " + kData + "/report_cpu.json --store " + store.string(), dir).code, 0);
  ASSERT_EQ(run_trainbench("store import " + kData + "/report_cpu.json --store " + other.string(), dir).code, 0);
  fs::create_symlink(store, dir / "link.sqlite");
  fs::create_hard_link(store, dir / "hard.sqlite");
  const std::string s = " --store " + store.string();
  const std::string dotted = (dir / "." / "s.sqlite").string();
  const fs::path input = dir / "in.json";
  fs::copy_file(kData + "/report_cpu.json", input);
  const std::vector<std::string> refused_commands = {
      "store export 1" + s + " -o " + store.string(),
      "store export 1" + s + " -o " + dotted,
      "store export 1" + s + " -o " + (dir / "link.sqlite").string(),
      "store export 1" + s + " -o " + (dir / "hard.sqlite").string(),
      "store export 1" + s + " -o " + store.string() + "-wal",
      "store export 1" + s + " -o " + store.string() + "-journal",
      "store export 1" + s + " -o " + other.string(),
      "board" + s + " -o " + store.string() + " --format md",
      "board" + s + " -o " + (dir / "link.sqlite").string() + " --format md",
      "report store:last=1" + s + " -o " + store.string(),
      "compare store:last=1 " + input.string() + s + " -o " + dotted,
      "compare " + input.string() + " " + input.string() + " -o " + input.string(),
      kTiny + s + " -o " + store.string(),
      kTiny + s + " -o " + (dir / "link.sqlite").string(),
      kTiny + " --store " + (dir / "new.sqlite").string() + " -o " + (dir / "new.sqlite").string(),
      kTiny + s + " -o " + (dir / "r.json").string() + " --report " + store.string(),
      "peak -o " + store.string(),
  };
  for (const auto& cmd : refused_commands) {
    const CmdResult r = run_trainbench(cmd, dir);
    EXPECT_TRUE(refused(r, {})) << cmd;
    EXPECT_EQ(listed(store, dir).size(), 1u) << "after: " << cmd;
  }
  EXPECT_EQ(listed(other, dir).size(), 1u);
  EXPECT_FALSE(fs::exists(dir / "new.sqlite")) << "nothing ran";
  EXPECT_TRUE(read_results(input.string()).benchmarks.size() > 0) << "the input is intact";
  // The default store of a command that keeps nothing (peak, op, explain): the test's XDG_DATA_HOME.
  const fs::path home = dir / "home";
  const fs::path default_store = home / "trainbench" / "results.sqlite";
  ASSERT_EQ(run_trainbench("store import " + kData + "/report_cpu.json", dir, {"XDG_DATA_HOME=" + home.string()}).code,
            0);
  const CmdResult r = run_trainbench("peak -o " + default_store.string(), dir, {"XDG_DATA_HOME=" + home.string()});
  EXPECT_TRUE(refused(r, {"SQLite"})) << r.err;
  EXPECT_EQ(listed(default_store, dir).size(), 1u);
}

TEST(StoreCli, CompareAndReportReadStoredRuns) {
  const fs::path dir = temp_dir("storecli", "compare");
  const std::string store = " --store " + (dir / "s.sqlite").string();
  const std::string base = kData + "/compare_base.json", other = kData + "/compare_other.json";
  ASSERT_EQ(run_trainbench("store import " + base + " " + other + store, dir).code, 0);
  const CmdResult files = run_trainbench("compare " + base + " " + other + " --format json", dir);
  const CmdResult stored = run_trainbench("compare store:last=2" + store + " --format json", dir);
  ASSERT_EQ(files.code, 0) << files.err;
  ASSERT_EQ(stored.code, 0) << stored.err;
  nlohmann::json a = nlohmann::json::parse(files.out)["comparisons"], b = nlohmann::json::parse(stored.out)["comparisons"];
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0]["base"], "store:run=1");
  EXPECT_EQ(b[0]["other"], "store:run=2");
  EXPECT_EQ(a[0]["cases"], b[0]["cases"]);  // the same joins, ratios and verdicts as from the files
  EXPECT_FALSE(a[0]["cases"].empty());
  const CmdResult report = run_trainbench("report store:run=1 " + other + " -o " + (dir / "r.html").string() + store, dir);
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_NE(slurp(dir / "r.html").find("store:run=1"), std::string::npos);
}

// Writers at once: four imports of ten runs each and two runs, all started together on one store.
TEST(StoreCli, WritersAtOnceLoseNothing) {
  const fs::path dir = temp_dir("storecli", "together");
  const fs::path store = dir / "s.sqlite";
  std::vector<std::string> commands;
  for (int p = 0; p < 4; ++p) {
    std::string files;
    for (int i = 0; i < 10; ++i) files += " " + variant(dir, p * 10 + i).string();
    commands.push_back(std::string(TRAINBENCH_EXE) + " store import" + files + " --store " + store.string());
  }
  for (int p = 0; p < 2; ++p) {
    commands.push_back(std::string(TRAINBENCH_EXE) + " " + kTiny + " -o " + (dir / fmt::format("run{}.json", p)).string() +
                       " --store " + store.string());
  }
  std::string script;
  for (size_t i = 0; i < commands.size(); ++i) {
    script += commands[i] + " > " + (dir / fmt::format("out{}", i)).string() + " 2>&1 & ";
  }
  script += "fail=0; for j in $(jobs -p); do wait $j || fail=1; done; exit $fail";
  EXPECT_EQ(shell("bash -c '" + script + "'"), 0) << slurp(dir / "out0") << slurp(dir / "out4");
  const nlohmann::json runs = listed(store, dir);
  EXPECT_EQ(runs.size(), 42u);  // 40 imported + 2 measured: none lost
  for (const auto& run : runs) EXPECT_GT(run["cases"].get<int>(), 0);
}

// A write killed at any moment leaves the run whole or absent, never in part. The import of 6000
// cases is killed as soon as its write-ahead log (empty while no write is open: the store was closed
// before) reaches a size: SQLite writes the uncommitted pages there during the write. A store with no
// run after such a kill is a kill mid-write, which the next opening discards.
TEST(StoreCli, AKilledWriteLeavesNoHalfRun) {
  const fs::path dir = temp_dir("storecli", "killed");
  const fs::path big = variant(dir, 1, 6000);
  int mid_write = 0, complete = 0;
  for (const uintmax_t wal_bytes : {uintmax_t{1}, uintmax_t{64} << 10, uintmax_t{256} << 10, uintmax_t{1} << 20}) {
    const fs::path store = dir / fmt::format("k{}.sqlite", wal_bytes);
    ASSERT_EQ(shell(std::string(TRAINBENCH_EXE) + " store list --store " + store.string() + " > /dev/null 2>&1"), 0);
    const fs::path wal = store.string() + "-wal";
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const std::string cmd = std::string("exec ") + TRAINBENCH_EXE + " store import " + big.string() + " --store " +
                              store.string() + " > /dev/null 2>&1";
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    for (;;) {
      std::error_code ec;
      if (fs::file_size(wal, ec) >= wal_bytes && !ec) {
        kill(pid, SIGKILL);
        break;
      }
      if (waitpid(pid, &status, WNOHANG) == pid) break;  // it ended before the log grew that large
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    waitpid(pid, &status, 0);
    const nlohmann::json runs = listed(store, dir);
    ASSERT_LE(runs.size(), 1u);
    if (runs.empty()) {
      ++mid_write;
    } else {
      // The cases stored, read back (not the run's own count of them).
      const auto opened = Store::open({StoreSpec::Kind::sqlite, store.string()});
      EXPECT_EQ(opened->load(runs[0]["run"].get<int64_t>()).benchmarks.size(), 6000u)
          << "a run stored in part, killed at " << wal_bytes << " WAL bytes";
      ++complete;
    }
  }
  std::cerr << fmt::format("killed mid-write {}, complete {}\n", mid_write, complete);
  EXPECT_GE(mid_write, 1) << "no kill landed inside the write: the test proved nothing";
}

// A run that ends while another process holds the store's write lock says it waits (after a second),
// and SIGTERM then ends the wait at once: exit 143, its results file written, nothing stored. (Before,
// the signal was ignored until the lock freed and the run exited 0.)
TEST(StoreCli, ARunWaitingForTheStoresLockSaysSoAndStopsOnSigterm) {
  const fs::path dir = temp_dir("storecli", "waiting");
  const fs::path store = dir / "s.sqlite";
  ASSERT_EQ(shell(std::string(TRAINBENCH_EXE) + " store list --store " + store.string() + " > /dev/null 2>&1"), 0);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(store.string().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  const fs::path out = dir / "r.json", err = dir / "err.txt";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string cmd = std::string("exec ") + TRAINBENCH_EXE +
                            " run --case convnet:channels=8,depth=1,image=8:b1:fp32:nchw:cpu --warmup 0 --min-steps 2"
                            " --min-time 0 --max-time 5 --max-noise 100 --store " +
                            store.string() + " -o " + out.string() + " > /dev/null 2> " + err.string();
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  bool waiting = false;
  for (int i = 0; i < 600 && !waiting; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    waiting = slurp(err).find("waiting for " + store.string()) != std::string::npos;
  }
  EXPECT_TRUE(waiting) << slurp(err);
  const auto t0 = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 143) << "status " << status << ": " << slurp(err);
  EXPECT_NE(
      slurp(err).find("interrupted while waiting for another process's write; the results are in " + out.string()),
      std::string::npos)
      << slurp(err);
  EXPECT_EQ(read_results(out.string()).benchmarks.size(), 1u);
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_TRUE(listed(store, dir).empty());
}

// An import past the file-size limit (prlimit --fsize) is one line and a failure exit, not a death by
// SIGXFSZ; the store keeps what it had (no half run).
TEST(StoreCli, AnImportPastTheFileSizeLimitIsOneLine) {
  const fs::path dir = temp_dir("storecli", "fsize");
  const fs::path big = variant(dir, 1, 6000);
  const fs::path store = dir / "s.sqlite";
  ASSERT_EQ(shell(std::string(TRAINBENCH_EXE) + " store list --store " + store.string() + " > /dev/null 2>&1"), 0);
  CmdResult r;
  r.code = shell("prlimit --fsize=200000 " + std::string(TRAINBENCH_EXE) + " store import " + big.string() +
                 " --store " + store.string() + " > /dev/null 2> " + (dir / "err.txt").string() + " < /dev/null");
  r.err = slurp(dir / "err.txt");
  EXPECT_TRUE(r.code == 1 || r.code == 2) << r.code << ": " << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("trainbench: error: ", 0), 0u) << r.err;
  EXPECT_TRUE(listed(store, dir).empty());
}

// A store in a folder that cannot be written (here a read-only bind mount, in a mount namespace of
// its own) can be listed; adding to it is one line that says why. (Before, even `store list` failed:
// "unable to open database file".)
TEST(StoreCli, AStoreInAReadOnlyFolderCanBeReadButNotAddedTo) {
  if (shell("unshare -m true > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mount namespace here (unshare -m)";
  const fs::path dir = temp_dir("storecli", "readonly");
  const fs::path src = dir / "src", ro = dir / "ro";
  fs::create_directories(src);
  fs::create_directories(ro);
  ASSERT_EQ(
      run_trainbench("store import " + kData + "/report_cpu.json --store " + (src / "s.sqlite").string(), dir).code, 0);
  const std::string exe = TRAINBENCH_EXE, store = (ro / "s.sqlite").string(), d = dir.string();
  const std::string script = "mount --bind -o ro " + src.string() + " " + ro.string() + " || exit 9; " + exe +
                             " store list --format json --store " + store + " > " + d + "/list.out 2> " + d +
                             "/list.err; echo $? > " + d + "/list.rc; " + exe + " store import " + kData +
                             "/report_gpu.json --store " + store + " > /dev/null 2> " + d + "/add.err; echo $? > " + d +
                             "/add.rc";
  ASSERT_EQ(shell("unshare -m sh -c '" + script + "'"), 0);
  EXPECT_EQ(slurp(dir / "list.rc"), "0\n") << slurp(dir / "list.err");
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "list.out")).size(), 1u);
  EXPECT_EQ(slurp(dir / "add.rc"), "2\n");
  const std::string err = slurp(dir / "add.err");
  EXPECT_EQ(count_lines(err), 1) << err;
  EXPECT_NE(err.find("the store is read-only here"), std::string::npos) << err;
}

// SIGTERM during a run: the cases measured are in its results file and in the store; --resume
// measures the rest, and the stored run it makes takes the interrupted one's place.
TEST(StoreCli, AnInterruptedRunIsStoredAndItsResumeCompletesIt) {
  const fs::path dir = temp_dir("storecli", "resume");
  const fs::path store = dir / "s.sqlite", out = dir / "r.json";
  const std::string cases = "run --case convnet:b1:fp32:nchw:cpu --case convnet:b2:fp32:nchw:cpu"
                            " --case convnet:b3:fp32:nchw:cpu --warmup 1 --min-steps 3 --min-time 0 --max-time 1"
                            " --max-noise 0 --store " + store.string() + " -o " + out.string();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string cmd = std::string("exec ") + TRAINBENCH_EXE + " " + cases + " > /dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const fs::path journal = out.string() + ".journal";
  bool have_one = false;
  for (int i = 0; i < 600 && !have_one; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (fs::exists(journal)) have_one = !read_journal(journal.string()).records.empty();
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(have_one) << "no case reached the journal";
  nlohmann::json runs = listed(store, dir);
  ASSERT_EQ(runs.size(), 1u) << "the interrupted run was not stored";
  const int measured = runs[0]["cases"].get<int>();
  ASSERT_GE(measured, 1);
  ASSERT_LT(measured, 3) << "interrupted too late to test the resume";
  const CmdResult r = run_trainbench(cases + " --resume", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("it completes run 1 (interrupted), which it replaces"), std::string::npos) << r.err;
  runs = listed(store, dir);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["cases"].get<int>(), 3);
  EXPECT_EQ(runs[0]["run"].get<int>(), 2);
}

}  // namespace
}  // namespace trainbench
