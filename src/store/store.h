// The results store: every run kept, so a table grows across machines and a history exists
// (docs/store.md). A run is a results file whole: its context, its cases (the records, raw step
// times included) and what else it held (ops, explain), identified by a content hash so that adding
// it twice adds nothing. Each add is one transaction: a run is there whole or not at all. SQLite by
// default (a file); the schema is versioned and migrated forward when a store is opened.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/value_rules.h"  // InputError
#include "results/results_file.h"
#include "store/sql.h"

namespace trainbench {

// The store's own schema (docs/store.md), independent of the results files' schema_version.
constexpr int kStoreSchemaVersion = 1;

// Where runs are kept, as the user named it. The one rule for a store's name wherever it enters
// (--store, TRAINBENCH_STORE, compare's and report's store: inputs): "none" keeps nothing;
// "postgresql://..." or "postgres://..." is a server; "sqlite:PATH" or any other text is an SQLite
// file. An empty name is refused.
struct StoreSpec {
  enum class Kind { none, sqlite, postgresql };
  Kind kind = Kind::none;
  std::string where;  // the path, or the URL as given
};
// Throws InputError naming `source` ("--store", "TRAINBENCH_STORE").
StoreSpec parse_store_spec(const std::string& text, const std::string& source);
// $XDG_DATA_HOME/trainbench/results.sqlite, else ~/.local/share/trainbench/results.sqlite; "" when
// neither variable is set.
std::string default_store_path();
// --no-store, then --store, then TRAINBENCH_STORE, then the default path (none when there is none).
StoreSpec choose_store(const std::string& flag, bool no_store);

// One stored run, as `store list` shows it.
struct StoredRun {
  int64_t id = 0;
  std::string hash;  // SHA-256 of the results' canonical JSON
  std::string stored_at, start_time;
  std::string hostname, device, device_name, libtorch_version, trainbench_version, git_revision;
  int64_t cases = 0, ok_cases = 0;
};

// One stored case: the columns the board reads (docs/store.md, "Schema") and the record's JSON.
struct StoredCase {
  int64_t run_id = 0, position = 0;
  std::string name, model, precision, layout, device, status, unit;
  int64_t batch_size = 0, threads = 0;
  double throughput = 0.0, median_s = 0.0, jitter_s = 0.0;  // NaN where the record has none (failed cases)
  std::string record;                                        // the record, as JSON text
};

// Which runs: the text after "store:" (docs/store.md, "Queries"): comma-separated key=value pairs,
// all of which a run must match. device=cuda (a case on that device: cuda matches cuda:0),
// machine=HOST, libtorch=2.11 (version prefix), model=resnet50 (a case of that model), run=ID,
// since=2026-01-31 (started on or after), last=N (the N latest of those matching). Empty: every run.
struct RunQuery {
  std::string device, machine, libtorch, model, since;
  int64_t run = 0;   // 0: any
  int64_t last = 0;  // 0: all
};
// Throws InputError naming the bad pair and the keys there are.
RunQuery parse_run_query(const std::string& text);

// The hash that identifies a run: SHA-256 of to_json(results).dump() (keys sorted, no spaces).
std::string run_hash(const ResultsFile& f);

class Store {
 public:
  // Checks the schema (newer than this trainbench's: refused; older: migrated in one transaction;
  // none: created). Throws StoreError.
  explicit Store(std::unique_ptr<SqlConnection> db);
  // Throws StoreError (a store that cannot be opened) or InputError (a kind this build lacks).
  static std::unique_ptr<Store> open(const StoreSpec& spec);

  const std::string& name() const { return db_->name(); }
  SqlConnection& db() { return *db_; }

  struct Added {
    int64_t id = 0;
    bool added = false;  // false: the same run was stored already (as `id`)
    // Stored runs this one completes (a run interrupted, then resumed: the same context, each of
    // their cases among this run's), removed in the same transaction.
    std::vector<int64_t> replaced;
    // Not added because a stored run completes this one: an interrupted run imported after the run
    // that resumed it (the same context, each of this run's cases among that run's); `id` is that run.
    bool within = false;
  };
  Added add(const ResultsFile& f);
  // Matching runs, oldest first (by start time, then id).
  std::vector<StoredRun> runs(const RunQuery& q);
  // A run by id ("12") or by a prefix of its hash (at least 6 hex digits). Throws StoreError when
  // there is none, or several share the prefix.
  StoredRun find(const std::string& ref);
  // A run's cases in the run's order (none for an unknown id).
  std::vector<StoredCase> cases(int64_t run_id);
  // The run as a results file, as it was added. Throws StoreError.
  ResultsFile load(int64_t id);
  // Removes a run and its cases; false when there was none with that id.
  bool remove(int64_t id);

 private:
  void check_schema();
  std::unique_ptr<SqlConnection> db_;
};

}  // namespace trainbench
