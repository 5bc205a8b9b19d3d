// The results store (src/store) on SQLite, in this process: a run added twice is stored once and comes
// back byte for byte; hostile strings stay data; queries pick the runs they say; a resumed run
// completes its interrupted self; bad stores are refused with one line. The command line and real
// processes: test_store_cli.cpp; PostgreSQL: test_store_pg.cpp.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include "cli_util.h"
#include "store_wait_util.h"
#include "results/results_file.h"
#include "store/sql.h"
#include "store/store.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

using test::temp_dir;

const std::string kData = TRAINBENCH_TEST_DATA;

std::unique_ptr<Store> open_file(const fs::path& p) { return Store::open({StoreSpec::Kind::sqlite, p.string()}); }

// Runs SQL on the file directly (sqlite3's C API), beside the store: to plant what no store writes.
void raw_sql(const fs::path& p, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.string().c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

// Where `expected` (a fixture as its file holds it) says something that `actual` does not: "" when every
// key and value of `expected` is in `actual` (which may carry more: fields written since the fixture).
std::string missing_from(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& at = "") {
  if (expected.is_object()) {
    if (!actual.is_object()) return at + ": not an object";
    for (const auto& [key, value] : expected.items()) {
      if (!actual.contains(key)) return at + "/" + key + ": missing";
      const std::string m = missing_from(value, actual[key], at + "/" + key);
      if (!m.empty()) return m;
    }
    return "";
  }
  if (expected.is_array()) {
    if (!actual.is_array() || actual.size() != expected.size()) return at + ": not the same array";
    for (size_t i = 0; i < expected.size(); ++i) {
      const std::string m = missing_from(expected[i], actual[i], at + "/" + std::to_string(i));
      if (!m.empty()) return m;
    }
    return "";
  }
  return expected == actual ? "" : at + ": " + expected.dump() + " became " + actual.dump();
}

TEST(Store, ARunAddedTwiceIsStoredOnceAndComesBackAsItWent) {
  const fs::path dir = temp_dir("store", "twice");
  const auto store = open_file(dir / "s.sqlite");
  for (const char* name : {"report_cpu.json", "report_gpu.json", "report_dist.json", "explain_convnet.json"}) {
    const ResultsFile f = read_results(kData + "/" + name);
    const Store::Added a = store->add(f);
    EXPECT_TRUE(a.added) << name;
    const Store::Added again = store->add(f);
    EXPECT_FALSE(again.added) << name;
    EXPECT_EQ(again.id, a.id) << name;
    // What comes back says everything the file said, as the file says it (not the writer against
    // itself after a parse, where a field both drop would pass), explain's breakdown included.
    std::ifstream in(kData + "/" + name);
    const nlohmann::json file = nlohmann::json::parse(in);
    EXPECT_EQ(missing_from(file, nlohmann::json::parse(results_to_string(store->load(a.id)))), "") << name;
  }
  const auto runs = store->runs({});
  ASSERT_EQ(runs.size(), 4u);
  const ResultsFile cpu = read_results(kData + "/report_cpu.json");
  const auto it = std::find_if(runs.begin(), runs.end(), [&](const StoredRun& r) { return r.hash == run_hash(cpu); });
  ASSERT_NE(it, runs.end());
  EXPECT_EQ(it->cases, 8);  // the fixture's benchmarks array
  EXPECT_EQ(it->hostname, cpu.context.hostname);
  EXPECT_EQ(it->device, "cpu");
  EXPECT_EQ(store->find(it->hash.substr(0, 8)).id, it->id);
  EXPECT_EQ(store->find(std::to_string(it->id)).hash, it->hash);
  EXPECT_TRUE(store->remove(it->id));
  EXPECT_FALSE(store->remove(it->id));
  EXPECT_EQ(store->runs({}).size(), 3u);
  EXPECT_THROW(store->find(it->hash.substr(0, 8)), StoreError);
}

TEST(Store, HostileStringsAreDataNotSql) {
  const fs::path dir = temp_dir("store", "hostile");
  const auto store = open_file(dir / "s.sqlite");
  ResultsFile f = read_results(kData + "/report_cpu.json");
  const std::string evil = "x'); DROP TABLE runs; -- \"$1\" ?1 :a @b %_ \\ \xc3\xa9\xe2\x80\x8b";
  // A host name holds what the host-name rule lets through, SQL's markers among them; the rest of the
  // hostile text goes where any text may stand.
  const std::string host = "x);--$1?1:a@b%_*";
  f.context.hostname = host;
  f.context.device_name = std::string("nul\0inside", 10) + evil;
  f.benchmarks[0].model = evil;
  f.benchmarks[0].params["file"] = "'; DELETE FROM cases; --";
  const Store::Added a = store->add(f);
  ASSERT_TRUE(a.added);
  const ResultsFile back = store->load(a.id);
  EXPECT_EQ(back.context.hostname, host);
  EXPECT_EQ(back.context.device_name, std::string("nul\0inside", 10) + evil);
  ASSERT_EQ(back.benchmarks.size(), f.benchmarks.size());
  EXPECT_EQ(back.benchmarks[0].model, evil);
  EXPECT_EQ(back.benchmarks[0].params.at("file"), "'; DELETE FROM cases; --");
  RunQuery q;
  q.machine = host;
  ASSERT_EQ(store->runs(q).size(), 1u);
  EXPECT_EQ(store->runs(q)[0].hostname, host);
  q = {};
  q.model = evil;
  EXPECT_EQ(store->runs(q).size(), 1u);
  q.machine = "x";  // a prefix of the host's name is not the name
  EXPECT_EQ(store->runs(q).size(), 0u);
  EXPECT_EQ(store->runs({})[0].cases, 8);  // both tables are still there, whole
}

// What a results file may not hold, no store takes, SQLite as PostgreSQL (test_store_pg.cpp): a host
// name with a terminal's escape sequence, an HTML tag, a '/' (host "a/cpu" on device "cpu" would be
// labelled as host "a" on device "cpu/cpu"), 1 MiB of name; a device of no kind; a start time that is
// no time ("zzzz" would sort as the latest run for ever). Each is refused naming the field, and the
// file holding it is refused when read.
TEST(Store, AContextTheRulesRefuseIsStoredNowhereAndReadFromNoFile) {
  const fs::path dir = temp_dir("store", "context_rules");
  const auto store = open_file(dir / "s.sqlite");
  const ResultsFile good = read_results(kData + "/report_cpu.json");
  struct Bad {
    std::string field;
    std::function<void(Context&)> plant;
  };
  const std::vector<Bad> bad = {
      {"hostname", [](Context& c) { c.hostname = "a\x1b]0;owned\x07"; }},
      {"hostname", [](Context& c) { c.hostname = "<img src=x onerror=alert(1)>"; }},
      {"hostname", [](Context& c) { c.hostname = "a/cpu"; }},
      {"hostname", [](Context& c) { c.hostname = std::string(1 << 20, 'h'); }},
      {"device", [](Context& c) { c.device = "cpu/cpu"; }},
      {"device", [](Context& c) { c.device = "cpu,tpu:0"; }},
      {"start_time", [](Context& c) { c.start_time = "zzzz"; }},
      {"start_time", [](Context& c) { c.start_time = "2026-13-45T00:00:00Z"; }},
  };
  for (const auto& b : bad) {
    ResultsFile f = good;
    b.plant(f.context);
    try {
      (void)store->add(f);
      ADD_FAILURE() << b.field << ": stored";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("field \"" + b.field + "\""), std::string::npos) << e.what();
    }
    const fs::path file = dir / "bad.json";
    write_results_atomic(file.string(), f);
    try {
      (void)read_results(file.string());
      ADD_FAILURE() << b.field << ": read";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("field \"" + b.field + "\""), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(store->runs({}).empty());
  EXPECT_TRUE(store->add(good).added);  // the rules pass what trainbench writes
}

// A wait for another writer is bounded, said once it has lasted a second, and ended at once by an
// interrupt. Another connection holds SQLite's write lock (BEGIN IMMEDIATE) throughout.
TEST(Store, AWaitForAnotherWriterIsBoundedSaidAndInterruptible) {
  const fs::path dir = temp_dir("store", "wait");
  const fs::path path = dir / "s.sqlite";
  const auto store = open_file(path);
  const ResultsFile f = read_results(kData + "/report_cpu.json");
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.string().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  test::expect_bounded_said_interruptible_wait(*store, f);

  // Once the other writer is done, the add goes through.
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_TRUE(store->add(f).added);
}

// Four runs, the expected answers written from their contexts by hand.
TEST(Store, QueriesPickTheRunsTheySay) {
  const fs::path dir = temp_dir("store", "query");
  const auto store = open_file(dir / "s.sqlite");
  const ResultsFile cpu = read_results(kData + "/report_cpu.json");  // resnet18/50 ... on cpu
  const ResultsFile gpu = read_results(kData + "/report_gpu.json");  // on cuda:0
  struct Plan {
    const ResultsFile* base;
    const char* host;
    const char* start;
    const char* libtorch;
  };
  const std::vector<Plan> plans = {{&cpu, "alpha", "2026-01-01T10:00:00Z", "1.13.1"},
                                   {&gpu, "alpha", "2026-01-02T10:00:00Z", "2.11.0+cu130"},
                                   {&cpu, "beta", "2026-01-03T10:00:00Z", "2.11.0+cu130"},
                                   {&gpu, "beta", "2026-01-04T10:00:00Z", "2.10.0+cu128"}};
  std::vector<int64_t> ids;
  for (const auto& p : plans) {
    ResultsFile f = *p.base;
    f.context.hostname = p.host;
    f.context.start_time = p.start;
    f.context.libtorch_version = p.libtorch;
    ids.push_back(store->add(f).id);
  }
  auto pick = [&](const std::string& text) {
    std::vector<int64_t> out;
    for (const auto& r : store->runs(parse_run_query(text))) out.push_back(r.id);
    return out;
  };
  EXPECT_EQ(pick(""), ids);  // oldest first
  EXPECT_EQ(pick("device=cuda"), (std::vector<int64_t>{ids[1], ids[3]}));  // cuda matches cuda:0
  EXPECT_EQ(pick("device=cuda:0"), (std::vector<int64_t>{ids[1], ids[3]}));
  EXPECT_EQ(pick("device=cud"), std::vector<int64_t>{});  // a prefix of a device name is not a device
  EXPECT_EQ(pick("device=cpu,machine=beta"), std::vector<int64_t>{ids[2]});
  EXPECT_EQ(pick("libtorch=2.11"), (std::vector<int64_t>{ids[1], ids[2]}));
  EXPECT_EQ(pick("since=2026-01-03"), (std::vector<int64_t>{ids[2], ids[3]}));
  EXPECT_EQ(pick("last=2"), (std::vector<int64_t>{ids[2], ids[3]}));
  EXPECT_EQ(pick("machine=alpha,last=1"), std::vector<int64_t>{ids[1]});
  EXPECT_EQ(pick("run=" + std::to_string(ids[2])), std::vector<int64_t>{ids[2]});
  EXPECT_EQ(pick("model=" + cpu.benchmarks[0].model + ",device=cpu"), (std::vector<int64_t>{ids[0], ids[2]}));
}

TEST(Store, BadQueriesAndStoreNamesAreRefusedByOneRule) {
  for (const char* bad : {"last=0", "last=-1", "last=2.5", "last=", "device", "color=red", "device=a,device=b",
                          "since=yesterday", "run=abc", "device=cpu,,last=1"}) {
    EXPECT_THROW(parse_run_query(bad), InputError) << bad;
  }
  EXPECT_THROW(parse_store_spec("", "--store"), InputError);
  EXPECT_THROW(parse_store_spec("sqlite:", "--store"), InputError);
  EXPECT_THROW(parse_store_spec("mysql://host/db", "--store"), InputError);
  EXPECT_EQ(parse_store_spec("none", "--store").kind, StoreSpec::Kind::none);
  EXPECT_EQ(parse_store_spec("postgres://u@h/db", "--store").kind, StoreSpec::Kind::postgresql);
  const StoreSpec s = parse_store_spec("sqlite:/tmp/a b.sqlite", "--store");
  EXPECT_EQ(s.kind, StoreSpec::Kind::sqlite);
  EXPECT_EQ(s.where, "/tmp/a b.sqlite");
}

// The store's name is built from libpq's reading of the URL (its keywords, as PostgreSQL's docs define
// the URI form): whatever way the password is spelled, the name is the user, host, port and database
// only. A URL libpq cannot read, or whose credentials hold an unencoded '@' or '/', is refused in one
// line that quotes none of it.
TEST(Store, TheStoresNameComesFromLibpqsReadingNeverFromTheUrl) {
  if (postgresql_store_name("postgresql://h/db").find("without libpq") != std::string::npos) {
    GTEST_SKIP() << "built without libpq";
  }
  const std::string secret = "REAL-s3cret";
  const std::vector<std::pair<std::string, std::string>> named = {
      {"postgresql://bob:" + secret + "@db.example:5432/runs", "postgresql://bob@db.example:5432/runs"},
      {"postgresql://bob@host/db?password=" + secret + "&sslmode=require", "postgresql://bob@host/db"},
      {"postgresql://bob@host/db?password=decoy&password=" + secret, "postgresql://bob@host/db"},
      {"postgresql://bob@host/db?%70assword=" + secret, "postgresql://bob@host/db"},
      {"postgresql://bob@host/db?pass%77ord=" + secret, "postgresql://bob@host/db"},
      {"postgres://bob:" + secret + "@host/db", "postgresql://bob@host/db"},
      {"postgresql://bob:" + secret + "%40x@host/db", "postgresql://bob@host/db"},
      {"postgresql:///db?host=/tmp&password=" + secret, "postgresql:///db?host=/tmp"},
      {"postgresql:///db?host=/run/pg&port=5433", "postgresql:///db?host=/run/pg&port=5433"},
      {"postgresql://host/db", "postgresql://host/db"},
  };
  for (const auto& [url, name] : named) EXPECT_EQ(postgresql_store_name(url), name) << url;
  for (const std::string& url :
       {"postgresql://bob:RE/" + secret + "@host/db", "postgresql://bob:p@" + secret + "@host/db",
        "postgresql://bob@host/db?PASSWORD=" + secret, "postgresql://bob:" + secret + "%zz@host/db"}) {
    try {
      (void)postgresql_store_name(url);
      ADD_FAILURE() << "read: " << url;
    } catch (const StoreError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find(secret), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find("the URL is not shown"), std::string::npos) << what;
    }
    // Where it enters, as a flag: one line, exit 2's InputError, naming the flag.
    EXPECT_THROW(parse_store_spec(url, "--store"), InputError) << url;
  }
  try {
    (void)parse_store_spec("mysql://bob:" + secret + "@host/db", "--store");
    ADD_FAILURE() << "a mysql:// store was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).find(secret), std::string::npos) << e.what();
  }
}

TEST(Store, AResumedRunCompletesItsInterruptedSelf) {
  const fs::path dir = temp_dir("store", "resumed");
  const auto store = open_file(dir / "s.sqlite");
  const ResultsFile whole = read_results(kData + "/report_cpu.json");
  ResultsFile part = whole;
  part.benchmarks.resize(3);  // interrupted after 3 of 8 cases
  const int64_t first = store->add(part).id;
  ResultsFile other = whole;  // another run of the same machine: kept
  other.context.start_time = "2030-01-01T00:00:00Z";
  const int64_t kept = store->add(other).id;
  const Store::Added a = store->add(whole);
  EXPECT_TRUE(a.added);
  EXPECT_EQ(a.replaced, std::vector<int64_t>{first});
  const auto runs = store->runs({});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, a.id);
  EXPECT_EQ(runs[1].id, kept);
  // The interrupted part imported again after the run that completed it adds nothing: each of its
  // cases is in that run. (Before, it came back as a second point in the history.)
  const Store::Added again = store->add(part);
  EXPECT_FALSE(again.added);
  EXPECT_TRUE(again.within);
  EXPECT_EQ(again.id, a.id);
  EXPECT_EQ(store->runs({}).size(), 2u);
  // A run of the same start whose cases differ (a case measured twice differently) replaces nothing,
  // and is within nothing: it is added.
  ResultsFile changed = whole;
  changed.benchmarks[0].throughput *= 2;
  changed.benchmarks.resize(2);
  const Store::Added differs = store->add(changed);
  EXPECT_TRUE(differs.added);
  EXPECT_FALSE(differs.within);
  EXPECT_TRUE(differs.replaced.empty());
}

TEST(Store, ACorruptFileANewerSchemaAndAForeignDatabaseAreRefused) {
  const fs::path dir = temp_dir("store", "bad");
  {
    std::ofstream(dir / "garbage.sqlite") << std::string(4096, 'x');
    try {
      open_file(dir / "garbage.sqlite");
      ADD_FAILURE() << "a garbage file opened as a store";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("garbage.sqlite: not a readable store"), std::string::npos) << e.what();
    }
  }
  open_file(dir / "newer.sqlite");
  raw_sql(dir / "newer.sqlite", "UPDATE trainbench_meta SET value = '99' WHERE key = 'schema_version'");
  try {
    open_file(dir / "newer.sqlite");
    ADD_FAILURE() << "a newer store opened";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("schema 99, newer than this trainbench's (1)"), std::string::npos) << e.what();
  }
  raw_sql(dir / "foreign.sqlite", "CREATE TABLE photos (id INTEGER)");
  try {
    open_file(dir / "foreign.sqlite");
    ADD_FAILURE() << "another program's database opened as a store";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("not a trainbench store"), std::string::npos) << e.what();
  }
  fs::create_directories(dir / "folder.sqlite");
  EXPECT_THROW(open_file(dir / "folder.sqlite"), StoreError);
}

// Version 0 is an empty file; opening it makes version 1, whose tables are those docs/store.md names.
TEST(Store, AnEmptyFileIsMigratedToTheCurrentSchema) {
  const fs::path dir = temp_dir("store", "migrate");
  std::ofstream(dir / "empty.sqlite").close();
  const auto store = open_file(dir / "empty.sqlite");
  const auto version = store->db().query("SELECT value FROM trainbench_meta WHERE key = 'schema_version'");
  ASSERT_EQ(version.size(), 1u);
  EXPECT_EQ(sql_text(version[0][0]), std::to_string(kStoreSchemaVersion));
  const auto tables = store->db().query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  std::vector<std::string> names;
  for (const auto& t : tables) names.push_back(sql_text(t[0]));
  EXPECT_EQ(names, (std::vector<std::string>{"cases", "runs", "trainbench_meta"}));
}

}  // namespace
}  // namespace trainbench
