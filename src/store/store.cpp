// The results store: schema, migrations, and the run's way in and out (store.h, docs/store.md).
// Every value reaches the database as a bound parameter; the SQL here is constant text.
#include "store/store.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "core/value_rules.h"

namespace trainbench {

namespace {

// Schema version N is made by the statements of kMigrations[N - 1] from version N - 1; version 0 is
// an empty store. A new version adds a step here (never edits an old one) and raises
// kStoreSchemaVersion. {id} is the key column: SQLite's rowid alias or PostgreSQL's BIGSERIAL.
const std::vector<std::vector<const char*>> kMigrations = {
    {
        R"(CREATE TABLE runs (
             id {id},
             hash TEXT NOT NULL UNIQUE,
             stored_at TEXT NOT NULL,
             start_time TEXT NOT NULL,
             hostname TEXT NOT NULL,
             device TEXT NOT NULL,
             device_name TEXT NOT NULL,
             libtorch_version TEXT NOT NULL,
             trainbench_version TEXT NOT NULL,
             git_revision TEXT NOT NULL,
             results_schema BIGINT NOT NULL,
             cases BIGINT NOT NULL,
             ok_cases BIGINT NOT NULL,
             context TEXT NOT NULL,
             extra TEXT))",
        R"(CREATE TABLE cases (
             run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
             position BIGINT NOT NULL,
             name TEXT NOT NULL,
             model TEXT NOT NULL,
             batch_size BIGINT NOT NULL,
             precision TEXT NOT NULL,
             layout TEXT NOT NULL,
             device TEXT NOT NULL,
             threads BIGINT NOT NULL,
             status TEXT NOT NULL,
             throughput DOUBLE PRECISION,
             unit TEXT NOT NULL,
             median_s DOUBLE PRECISION,
             jitter_s DOUBLE PRECISION,
             record TEXT NOT NULL,
             PRIMARY KEY (run_id, position)))",
        "CREATE INDEX runs_by_machine ON runs (hostname, start_time)",
        "CREATE INDEX cases_by_name ON cases (name)",
        "CREATE INDEX cases_by_model ON cases (model)",
    },
};

std::string dialect(const char* sql, bool sqlite) {
  std::string s = sql;
  const std::string token = "{id}";
  if (const auto at = s.find(token); at != std::string::npos) {
    s.replace(at, token.size(), sqlite ? "INTEGER PRIMARY KEY" : "BIGSERIAL PRIMARY KEY");
  }
  return s;
}

std::vector<std::string> table_names(SqlConnection& db) {
  const char* sql = db.is_sqlite() ? "SELECT name FROM sqlite_master WHERE type = 'table'"
                                   : "SELECT table_name FROM information_schema.tables "
                                     "WHERE table_schema = current_schema()";
  std::vector<std::string> names;
  for (const auto& row : db.query(sql)) names.push_back(sql_text(row[0]));
  return names;
}

int stored_version(SqlConnection& db) {
  const auto rows = db.query("SELECT value FROM trainbench_meta WHERE key = 'schema_version'");
  if (rows.empty()) return 0;
  int64_t v = 0;
  if (!whole_number_problem(sql_text(rows[0][0]), &v).empty() || v < 0) {
    throw StoreError(db.name() + ": not a readable store (schema_version '" + sql_text(rows[0][0]) + "')");
  }
  return static_cast<int>(v);
}

void refuse_newer(SqlConnection& db, int version) {
  if (version > kStoreSchemaVersion) {
    throw StoreError(db.name() + ": the store has schema " + std::to_string(version) + ", newer than this trainbench's (" +
                     std::to_string(kStoreSchemaVersion) + "): use a newer trainbench, or another --store");
  }
}

bool is_hex(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

StoredRun stored_run(const SqlRow& row) {
  StoredRun r;
  r.id = sql_int(row[0]);
  r.hash = sql_text(row[1]);
  r.stored_at = sql_text(row[2]);
  r.start_time = sql_text(row[3]);
  r.hostname = sql_text(row[4]);
  r.device = sql_text(row[5]);
  r.device_name = sql_text(row[6]);
  r.libtorch_version = sql_text(row[7]);
  r.trainbench_version = sql_text(row[8]);
  r.git_revision = sql_text(row[9]);
  r.cases = sql_int(row[10]);
  r.ok_cases = sql_int(row[11]);
  return r;
}

// A text column the queries read (the JSON keeps the exact value): PostgreSQL's text holds no NUL.
std::string column_text(std::string s) {
  for (size_t at = s.find('\0'); at != std::string::npos; at = s.find('\0', at)) s.replace(at, 1, "\xEF\xBF\xBD");
  return s;
}

constexpr const char* kRunColumns =
    "id, hash, stored_at, start_time, hostname, device, device_name, libtorch_version, trainbench_version, "
    "git_revision, cases, ok_cases";

}  // namespace

namespace {
// The hash of a run from its JSON (to_json of its results), so add() serialises the run once.
std::string hash_of(const nlohmann::json& whole) { return sha256_hex(whole.dump()); }
}  // namespace

std::string run_hash(const ResultsFile& f) { return hash_of(to_json(f)); }

Store::Store(std::unique_ptr<SqlConnection> db) : db_(std::move(db)) { check_schema(); }

void Store::check_schema() {
  SqlConnection& db = *db_;
  const auto tables = table_names(db);
  const bool ours = std::find(tables.begin(), tables.end(), "trainbench_meta") != tables.end();
  if (!ours && !tables.empty()) {
    throw StoreError(db.name() + ": not a trainbench store (it holds other tables, such as '" + tables.front() + "')");
  }
  if (ours) {
    const int version = stored_version(db);
    refuse_newer(db, version);
    if (version == kStoreSchemaVersion) return;
  }
  // Created or migrated in one transaction; the version is read again inside it, since another
  // process may have done it meanwhile.
  WriteTransaction t(db);
  db.query("CREATE TABLE IF NOT EXISTS trainbench_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  int version = stored_version(db);
  refuse_newer(db, version);
  for (; version < kStoreSchemaVersion; ++version) {
    for (const char* sql : kMigrations[static_cast<size_t>(version)]) db.query(dialect(sql, db.is_sqlite()));
  }
  db.query("DELETE FROM trainbench_meta WHERE key = 'schema_version'");
  db.query("INSERT INTO trainbench_meta (key, value) VALUES ('schema_version', $1)", {std::to_string(version)});
  t.commit();
}

std::unique_ptr<Store> Store::open(const StoreSpec& spec) {
  switch (spec.kind) {
    case StoreSpec::Kind::sqlite:
      return std::make_unique<Store>(open_sqlite(spec.where));
    case StoreSpec::Kind::postgresql:
      return std::make_unique<Store>(open_postgresql(spec.where));
    case StoreSpec::Kind::none:
      break;
  }
  return nullptr;
}

namespace {

// One rule for every store, where a run enters it: what a results file may not hold, no store takes.
// The store keeps measurements: a prediction (`trainbench predict`) is never stored as one.
void check_storable(const ResultsFile& f, const std::string& store_name) {
  try {
    check_context(f.context);
  } catch (const std::runtime_error& e) {
    throw StoreError(store_name + ": not stored: its context's " + e.what());
  }
  for (const auto& r : f.benchmarks) {
    if (r.predicted())
      throw StoreError(store_name + ": not stored: it holds predictions (status predicted, " + r.name +
                       "), and the store keeps measurements only");
  }
}

// The stored runs of the same context (a run and its resumed self), each with its cases, read once:
// which holds every case of which.
std::vector<std::pair<int64_t, std::set<std::string>>> runs_of_context(SqlConnection& db, const Context& c,
                                                                       const std::string& context_text) {
  std::vector<std::pair<int64_t, std::set<std::string>>> same_context;
  for (const auto& row : db.query("SELECT id FROM runs WHERE start_time = $1 AND hostname = $2 AND context = $3",
                                  {column_text(c.start_time), column_text(c.hostname), context_text})) {
    std::set<std::string> theirs;
    for (const auto& rec : db.query("SELECT record FROM cases WHERE run_id = $1", {row[0]})) {
      theirs.insert(sql_text(rec[0]));
    }
    same_context.emplace_back(sql_int(row[0]), std::move(theirs));
  }
  return same_context;
}

// Each case of run `id`: its columns, and its record as stored (`record_text`, in the file's order).
void insert_cases(SqlConnection& db, int64_t id, const ResultsFile& f, const std::vector<std::string>& record_text) {
  for (size_t i = 0; i < f.benchmarks.size(); ++i) {
    const Record& r = f.benchmarks[i];
    db.query(
        "INSERT INTO cases (run_id, position, name, model, batch_size, precision, layout, device, threads, status, "
        "throughput, unit, median_s, jitter_s, record) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        {id, static_cast<int64_t>(i), column_text(r.name), column_text(r.model), r.batch_size, column_text(r.precision),
         column_text(r.layout), column_text(r.device), int64_t{r.threads}, std::string(to_string(r.status)),
         r.throughput, column_text(r.unit), r.step_time_s.median, r.step_time_s.jitter, record_text[i]});
  }
}

}  // namespace

Store::Added Store::add(const ResultsFile& f) {
  check_storable(f, name());
  const nlohmann::json whole = to_json(f);
  const std::string hash = hash_of(whole);
  SqlConnection& db = *db_;
  WriteTransaction t(db);
  if (const auto rows = db.query("SELECT id FROM runs WHERE hash = $1", {hash}); !rows.empty()) {
    t.commit();
    return {sql_int(rows[0][0]), false, {}};
  }
  std::vector<std::string> record_text;  // each case's JSON, as stored
  for (const auto& r : whole["benchmarks"]) record_text.push_back(r.dump());
  const std::set<std::string> records(record_text.begin(), record_text.end());
  const Context& c = f.context;
  const std::string context_text = whole["context"].dump();
  const auto same_context = runs_of_context(db, c, context_text);
  // An interrupted run imported after the run that completed it adds nothing: its cases are there.
  for (const auto& [other, theirs] : same_context) {
    if (std::includes(theirs.begin(), theirs.end(), records.begin(), records.end())) {
      t.commit();
      Added within{other, false, {}};
      within.within = true;
      return within;
    }
  }
  int64_t ok = 0;
  for (const auto& r : f.benchmarks) ok += r.ok() ? 1 : 0;
  nlohmann::json extra = nlohmann::json::object();
  for (const char* key : {"ops", "explain"}) {
    if (whole.contains(key)) extra[key] = whole[key];
  }
  const auto rows = db.query(
      "INSERT INTO runs (hash, stored_at, start_time, hostname, device, device_name, libtorch_version, "
      "trainbench_version, git_revision, results_schema, cases, ok_cases, context, extra) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id",
      {hash, iso8601_utc_now(), column_text(c.start_time), column_text(c.hostname), column_text(c.device),
       column_text(c.device_name), column_text(c.libtorch_version), column_text(c.trainbench_version),
       column_text(c.git_revision), int64_t{f.schema_version}, static_cast<int64_t>(f.benchmarks.size()), ok,
       context_text, extra.empty() ? SqlValue{} : SqlValue{extra.dump()}});
  const int64_t id = sql_int(rows.at(0).at(0));
  Added out{id, true, {}};
  // A resumed run completes the interrupted one stored before it: the same context (a resumed run
  // keeps its first start's), every stored case among its own. It takes that run's place; nothing
  // measured is lost, and the caller says so.
  for (const auto& [older, theirs] : same_context) {
    if (std::includes(records.begin(), records.end(), theirs.begin(), theirs.end())) out.replaced.push_back(older);
  }
  insert_cases(db, id, f, record_text);
  for (const int64_t older : out.replaced) {
    db.query("DELETE FROM cases WHERE run_id = $1", {older});
    db.query("DELETE FROM runs WHERE id = $1", {older});
  }
  t.commit();
  return out;
}

std::vector<StoredRun> Store::runs(const RunQuery& q) {
  // Every filter is written once with its parameter; an unset one is NULL and matches every run.
  const std::string sql = std::string("SELECT ") + kRunColumns +
                          " FROM runs WHERE (CAST($1 AS BIGINT) IS NULL OR id = $1)"
                          " AND (CAST($2 AS TEXT) IS NULL OR hostname = $2)"
                          " AND (CAST($3 AS TEXT) IS NULL OR substr(libtorch_version, 1, length(CAST($3 AS TEXT))) = $3)"
                          " AND (CAST($4 AS TEXT) IS NULL OR start_time >= $4)"
                          " AND (CAST($5 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM cases k WHERE k.run_id = runs.id AND"
                          " (k.device = $5 OR substr(k.device, 1, length(CAST($5 AS TEXT)) + 1) = CAST($5 AS TEXT) || ':')))"
                          " AND (CAST($6 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM cases k WHERE k.run_id = runs.id AND"
                          " k.model = $6))"
                          " ORDER BY start_time DESC, id DESC";
  auto text = [](const std::string& s) { return s.empty() ? SqlValue{} : SqlValue{s}; };
  const auto rows = db_->query(sql, {q.run ? SqlValue{q.run} : SqlValue{}, text(q.machine), text(q.libtorch),
                                     text(q.since), text(q.device), text(q.model)});
  std::vector<StoredRun> out;
  for (const auto& row : rows) {
    if (q.last > 0 && static_cast<int64_t>(out.size()) == q.last) break;
    out.push_back(stored_run(row));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

StoredRun Store::find(const std::string& ref) {
  int64_t id = 0;
  std::vector<SqlRow> rows;
  if (whole_number_problem(ref, &id).empty() && id > 0) {
    rows = db_->query(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = $1", {id});
  } else if (ref.size() >= 6 && is_hex(ref)) {
    rows = db_->query(std::string("SELECT ") + kRunColumns + " FROM runs WHERE substr(hash, 1, length(CAST($1 AS TEXT))) = $1 LIMIT 2",
                      {ref});
  } else {
    throw InputError("'" + ref + "' names no run: give a run's id or at least 6 hex digits of its hash");
  }
  if (rows.empty()) throw StoreError(name() + ": no run '" + ref + "'");
  if (rows.size() > 1) throw StoreError(name() + ": several runs' hashes start with '" + ref + "': give more digits");
  return stored_run(rows[0]);
}

std::vector<StoredCase> Store::cases(int64_t run_id) {
  std::vector<StoredCase> out;
  for (const auto& row : db_->query("SELECT position, name, model, batch_size, precision, layout, device, threads, "
                                    "status, throughput, unit, median_s, jitter_s, record FROM cases "
                                    "WHERE run_id = $1 ORDER BY position",
                                    {run_id})) {
    StoredCase c;
    c.run_id = run_id;
    c.position = sql_int(row[0]);
    c.name = sql_text(row[1]);
    c.model = sql_text(row[2]);
    c.batch_size = sql_int(row[3]);
    c.precision = sql_text(row[4]);
    c.layout = sql_text(row[5]);
    c.device = sql_text(row[6]);
    c.threads = sql_int(row[7]);
    c.status = sql_text(row[8]);
    c.throughput = sql_real(row[9]);
    c.unit = sql_text(row[10]);
    c.median_s = sql_real(row[11]);
    c.jitter_s = sql_real(row[12]);
    c.record = sql_text(row[13]);
    out.push_back(std::move(c));
  }
  return out;
}

ResultsFile Store::load(int64_t id) {
  const auto runs = db_->query("SELECT results_schema, context, extra FROM runs WHERE id = $1", {id});
  if (runs.empty()) throw StoreError(name() + ": no run " + std::to_string(id));
  const std::string source = name() + ": run " + std::to_string(id);
  try {
    nlohmann::json whole = {{"schema_version", sql_int(runs[0][0])},
                            {"context", nlohmann::json::parse(sql_text(runs[0][1]))},
                            {"benchmarks", nlohmann::json::array()}};
    if (const std::string extra = sql_text(runs[0][2]); !extra.empty()) whole.update(nlohmann::json::parse(extra));
    for (const auto& row : db_->query("SELECT record FROM cases WHERE run_id = $1 ORDER BY position", {id})) {
      whole["benchmarks"].push_back(nlohmann::json::parse(sql_text(row[0])));
    }
    return results_from_json(whole, source);
  } catch (const nlohmann::json::exception& e) {
    throw StoreError(source + ": not readable: " + detail::short_json_error(e));
  } catch (const ResultsError& e) {
    throw StoreError(e.what());
  }
}

bool Store::remove(int64_t id) {
  WriteTransaction t(*db_);
  const bool there = !db_->query("SELECT id FROM runs WHERE id = $1", {id}).empty();
  db_->query("DELETE FROM cases WHERE run_id = $1", {id});
  db_->query("DELETE FROM runs WHERE id = $1", {id});
  t.commit();
  return there;
}

}  // namespace trainbench
