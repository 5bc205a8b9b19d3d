// The results store on a real PostgreSQL server, started by the test from Debian's postgresql
// binaries (initdb and pg_ctl in a temporary folder, listening on 127.0.0.1 only, password auth) and
// stopped after it. Where no server can start, each test is skipped with the reason, never passed.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli_util.h"
#include "store_wait_util.h"
#include "results/journal.h"
#include "results/results_file.h"
#include "store/sql.h"
#include "store/store.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

using namespace test;

const std::string kData = TRAINBENCH_TEST_DATA;

class PgServer {
 public:
  explicit PgServer(const std::string& name) {
    std::string bin;
    for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec_)) {
      if (fs::exists(e.path() / "bin" / "initdb")) bin = (e.path() / "bin").string();
    }
    if (bin.empty()) {
      skip_ = "no initdb under /usr/lib/postgresql (Debian's postgresql package)";
      return;
    }
    dir_ = temp_dir("pg", name);
    if (geteuid() == 0) {  // initdb refuses root: the server runs as the postgres user
      if (shell("id postgres > /dev/null 2>&1") != 0) {
        skip_ = "running as root and there is no postgres user to run the server";
        return;
      }
      as_owner_ = "runuser -u postgres -- ";
    }
    std::ofstream(dir_ / "pw") << password << "\n";
    if (!as_owner_.empty()) shell("chown -R postgres " + dir_.string());
    port_ = 20000 + static_cast<int>(getpid() % 20000);
    ctl_ = as_owner_ + bin + "/pg_ctl -D " + (dir_ / "data").string();
    if (shell(as_owner_ + bin + "/initdb -D " + (dir_ / "data").string() +
              " -U trainbench --auth=scram-sha-256 -E UTF8 --no-sync --pwfile=" + (dir_ / "pw").string() + " > " +
              (dir_ / "initdb.log").string() + " 2>&1") != 0) {
      skip_ = "initdb failed: " + slurp(dir_ / "initdb.log").substr(0, 300);
      return;
    }
    const std::string options = fmt::format("-c listen_addresses=127.0.0.1 -p {} -c unix_socket_directories={} -c fsync=off",
                                            port_, dir_.string());
    if (shell(ctl_ + " -l " + (dir_ / "server.log").string() + " -w -t 60 -o '" + options + "' start > /dev/null 2>&1") !=
        0) {
      skip_ = "the server did not start: " + slurp(dir_ / "server.log").substr(0, 300);
      return;
    }
    up_ = true;
  }
  ~PgServer() { stop(); }
  void stop() {
    if (up_) shell(ctl_ + " -m immediate stop > /dev/null 2>&1");
    up_ = false;
  }

  const std::string& skip_reason() const { return skip_; }
  std::string url(const std::string& pw) const {
    return fmt::format("postgresql://trainbench{}@127.0.0.1:{}/postgres", pw.empty() ? "" : ":" + pw, port_);
  }
  std::string url() const { return url(password); }

  const std::string password = "s3cret-Pw_for_tests";

 private:
  std::error_code ec_;
  fs::path dir_;
  std::string as_owner_, ctl_, skip_;
  int port_ = 0;
  bool up_ = false;
};

#define START_SERVER(server, name)                              \
  PgServer server(name);                                        \
  if (!server.skip_reason().empty()) GTEST_SKIP() << server.skip_reason()

TEST(PgStore, RunsGoInAndComeOutAsOnSQLite) {
  START_SERVER(pg, "roundtrip");
  const auto store = Store::open(parse_store_spec(pg.url(), "--store"));
  EXPECT_EQ(store->name().find(pg.password), std::string::npos);
  std::vector<int64_t> ids;
  for (const char* name : {"report_cpu.json", "report_gpu.json", "explain_convnet.json"}) {
    const ResultsFile f = read_results(kData + "/" + name);
    const Store::Added a = store->add(f);
    EXPECT_TRUE(a.added) << name;
    EXPECT_FALSE(store->add(f).added) << name;
    EXPECT_EQ(results_to_string(store->load(a.id)), results_to_string(f)) << name;
    ids.push_back(a.id);
  }
  ResultsFile hostile = read_results(kData + "/report_cpu.json");
  hostile.context.hostname = "h);--$1:%_";  // what the host-name rule lets through, SQL's markers among it
  hostile.context.device_name = "h'); DROP TABLE runs; -- $1 \xc3\xa9";
  hostile.context.start_time = "2031-01-01T00:00:00Z";  // the latest run
  hostile.benchmarks[0].model = "'; DELETE FROM cases; --";
  // One rule for both stores: a host name of 1 MiB, which SQLite would hold and PostgreSQL's index
  // would not, is refused by either before any SQL, naming the field (test_store.cpp).
  ResultsFile huge = hostile;
  huge.context.hostname = std::string(1 << 20, 'h');
  try {
    (void)store->add(huge);
    ADD_FAILURE() << "a 1 MiB host name was stored";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("field \"hostname\""), std::string::npos) << e.what();
  }
  const Store::Added h = store->add(hostile);
  EXPECT_EQ(results_to_string(store->load(h.id)), results_to_string(hostile));
  RunQuery q;
  q.machine = hostile.context.hostname;
  ASSERT_EQ(store->runs(q).size(), 1u);
  EXPECT_EQ(store->runs(parse_run_query("device=cuda")).size(), 1u);
  EXPECT_EQ(store->runs(parse_run_query("last=2")).back().id, h.id);
  EXPECT_EQ(store->find(store->runs({}).front().hash.substr(0, 10)).id, store->runs({}).front().id);
  EXPECT_TRUE(store->remove(ids[0]));
  EXPECT_EQ(store->runs({}).size(), 3u);
  // Opened again: the schema is there and at its version.
  const auto again = Store::open(parse_store_spec(pg.url(), "--store"));
  EXPECT_EQ(again->runs({}).size(), 3u);
}

TEST(PgStore, PushCopiesEachRunOnceAndWritersAtOnceLoseNothing) {
  START_SERVER(pg, "push");
  const fs::path dir = temp_dir("pg", "push_work");
  const std::string local = " --store " + (dir / "local.sqlite").string();
  ASSERT_EQ(run_trainbench("store import " + kData + "/report_cpu.json " + kData + "/report_gpu.json " + kData +
                               "/report_dist.json" + local,
                           dir)
                .code,
            0);
  CmdResult r = run_trainbench("store push --to '" + pg.url() + "'" + local, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("3 added, 0 there already"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(pg.password), std::string::npos) << r.err;
  r = run_trainbench("store push --to '" + pg.url() + "'" + local, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("0 added, 3 there already"), std::string::npos) << r.err;
  // Three importers at once, five runs each, and a push of the same three again beside them.
  std::string script;
  for (int p = 0; p < 3; ++p) {
    std::string files;
    for (int i = 0; i < 5; ++i) {
      ResultsFile f = read_results(kData + "/report_cpu.json");
      f.context.start_time = fmt::format("2026-03-0{}T00:00:0{}Z", p + 1, i);
      const fs::path path = dir / fmt::format("p{}_{}.json", p, i);
      write_results_atomic(path.string(), f);
      files += " " + path.string();
    }
    script += std::string(TRAINBENCH_EXE) + " store import" + files + " --store '" + pg.url() + "' > /dev/null 2>&1 & ";
  }
  script += std::string(TRAINBENCH_EXE) + " store push --to '" + pg.url() + "'" + local + " > /dev/null 2>&1 & ";
  script += "fail=0; for j in $(jobs -p); do wait $j || fail=1; done; exit $fail";
  std::ofstream(dir / "together.sh") << script << "\n";
  EXPECT_EQ(shell("bash " + (dir / "together.sh").string()), 0);
  r = run_trainbench("store list --format json --store '" + pg.url() + "'", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).size(), 18u);  // 3 pushed + 15 imported: none lost, none twice
  // The machines' table from the team's store: bench-a/cpu (its fixture and the 15 imported copies),
  // bench-b/cuda:0 and vm/cpu; the copies repeat the same figures, so no change in any history.
  r = run_trainbench("board --format json --store '" + pg.url() + "'", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find(pg.password), std::string::npos);
  const nlohmann::json board = nlohmann::json::parse(r.out);
  ASSERT_EQ(board["columns"].size(), 3u);
  EXPECT_EQ(board["columns"][0]["label"], "bench-a/cpu");
  EXPECT_EQ(board["columns"][0]["runs"], 16);
  EXPECT_EQ(board["columns"][1]["label"], "bench-b/cuda:0");
  EXPECT_EQ(board["columns"][2]["label"], "vm/cpu");
  for (const auto& row : board["rows"]) {
    for (const auto& cell : row["cells"]) {
      if (!cell.is_null()) {
        EXPECT_TRUE(cell["changes"].empty()) << row["case"];
      }
    }
  }
}

// PostgreSQL's wait for another writer is SQLite's: bounded (1.5 s here), said once after a second,
// ended at once by an interrupt (the query is cancelled). A second connection holds trainbench's
// advisory lock in an open write transaction throughout. (Before, an import waited over 120 s, silent.)
TEST(PgStore, AWaitForAnotherWriterIsBoundedSaidAndInterruptible) {
  START_SERVER(pg, "wait");
  const auto store = Store::open(parse_store_spec(pg.url(), "--store"));
  const auto other = open_postgresql(pg.url());
  other->begin_write();
  const ResultsFile f = read_results(kData + "/report_cpu.json");
  test::expect_bounded_said_interruptible_wait(*store, f);
  other->rollback();
  EXPECT_TRUE(store->add(f).added);  // the connection is still good after the cancelled wait
}

TEST(PgStore, AWrongPasswordIsOneLineWithoutIt) {
  START_SERVER(pg, "password");
  const fs::path dir = temp_dir("pg", "password_work");
  CmdResult r = run_trainbench("store list --store '" + pg.url("Wr0ngPassw0rd") + "'", dir);
  EXPECT_TRUE(refused(r, {"password authentication failed"}));
  EXPECT_EQ(r.err.find("Wr0ngPassw0rd"), std::string::npos) << r.err;
  // The password from PGPASSWORD, the URL without one.
  r = run_trainbench("store list --store '" + pg.url("") + "'", dir, {"PGPASSWORD=" + pg.password});
  EXPECT_EQ(r.code, 0) << r.err;
}

// The server goes away during a run: the run ends with one line naming the store and the results file,
// exit 2, and the file holds every case measured.
TEST(PgStore, AServerGoneAtTheEndLosesNothingMeasured) {
  START_SERVER(pg, "gone");
  const fs::path dir = temp_dir("pg", "gone_work");
  const fs::path out = dir / "r.json";
  const std::string cmd = std::string(TRAINBENCH_EXE) +
                          " run --case convnet:b1:fp32:nchw:cpu --case convnet:b2:fp32:nchw:cpu --warmup 1"
                          " --min-steps 3 --min-time 1 --max-time 2 --max-noise 100 -o " + out.string() + " --store '" +
                          pg.url() + "'";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string line = "exec " + cmd + " > " + (dir / "stdout").string() + " 2> " + (dir / "stderr").string();
    execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // The first case's record in the journal: the store was checked before it ran (a server stopped while
  // that check still runs refuses the run instead), and the second case is measuring now.
  const fs::path journal = out.string() + ".journal";
  bool started = false;
  for (int i = 0; i < 1200 && !started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::error_code ec;
    started = fs::exists(journal, ec) && fs::file_size(journal, ec) > 0;
  }
  pg.stop();
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(started) << slurp(dir / "stderr");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2) << slurp(dir / "stderr");
  const std::string err = slurp(dir / "stderr");
  EXPECT_NE(err.find("trainbench: error: postgresql://trainbench@127.0.0.1"), std::string::npos) << err;
  EXPECT_NE(err.find("the results are in " + out.string()), std::string::npos) << err;
  EXPECT_EQ(err.find(pg.password), std::string::npos) << err;
  const ResultsFile f = read_results(out.string());
  ASSERT_EQ(f.benchmarks.size(), 2u);
  for (const auto& b : f.benchmarks) EXPECT_EQ(b.status, Status::ok) << b.error;
}

}  // namespace
}  // namespace trainbench
