// The SQLite connection: a file, WAL mode so readers never block the one writer, a busy timeout so
// two writers (two runs ending together, an import during a run) queue instead of failing.
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <system_error>

#include "store/sql.h"

namespace trainbench {

namespace {

class SqliteConnection final : public SqlConnection {
 public:
  explicit SqliteConnection(const std::string& path) : name_(path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw StoreError(name_ + ": is a folder, not a store file");
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty() && !fs::exists(parent, ec)) {
      fs::create_directories(parent, ec);
      if (ec) throw StoreError(name_ + ": cannot create its folder: " + ec.message());
    }
    // A store in a folder this process cannot write (a read-only mount, another user's folder) can
    // still be read: WAL needs its -shm and -wal files beside the store, so it is opened read-only and
    // immutable (no one can be writing it there: a writer needs the same folder). A -wal file beside it
    // means a writer was or is there: then it is not opened that way.
    const std::string folder = parent.empty() ? "." : parent.string();
    read_only_ = fs::exists(path, ec) && ::access(folder.c_str(), W_OK) != 0 && !fs::exists(path + "-wal", ec);
    const int rc = read_only_
                       ? sqlite3_open_v2(("file:" + uri_path(path) + "?mode=ro&immutable=1").c_str(), &db_,
                                         SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr)
                       : sqlite3_open_v2(path.c_str(), &db_,
                                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      const std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close(db_);
      db_ = nullptr;
      throw StoreError(name_ + ": cannot open: " + why);
    }
    sqlite3_busy_handler(db_, &SqliteConnection::on_busy, this);
    // The first read of the file: a file that is not a database fails here.
    query(read_only_ ? "PRAGMA schema_version" : "PRAGMA journal_mode=WAL");
    query("PRAGMA foreign_keys=ON");
    query("PRAGMA synchronous=NORMAL");  // WAL + NORMAL: a killed process loses no committed run
  }

  ~SqliteConnection() override {
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
    sqlite3_close(db_);
  }

  const std::string& name() const override { return name_; }
  bool is_sqlite() const override { return true; }

  std::vector<SqlRow> query(const std::string& sql, const std::vector<SqlValue>& params = {}) override {
    sqlite3_stmt* stmt = prepared(sql);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    for (size_t i = 0; i < params.size(); ++i) bind(stmt, i + 1, params[i]);
    std::vector<SqlRow> rows;
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        const std::string why = sqlite3_errmsg(db_);
        sqlite3_reset(stmt);
        fail(rc, why);
      }
      const int n = sqlite3_column_count(stmt);
      SqlRow row(static_cast<size_t>(n));
      for (int c = 0; c < n; ++c) row[static_cast<size_t>(c)] = column(stmt, c);
      rows.push_back(std::move(row));
    }
    sqlite3_reset(stmt);
    return rows;
  }

  void begin_write() override { query("BEGIN IMMEDIATE"); }
  void commit() override { query("COMMIT"); }
  void rollback() noexcept override { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }

 private:
  [[noreturn]] void fail(int rc, const std::string& why) const {
    const int primary = rc & 0xff;
    if (primary == SQLITE_READONLY && read_only_) {
      throw StoreError(name_ +
                       ": its folder cannot be written, so the store is read-only here (it can be listed, "
                       "shown, exported and read by board, compare and report; nothing can be added)");
    }
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
      throw StoreError(name_ + ": not a readable store (" + why + ")");
    }
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
      if (interrupted_) throw StoreInterrupted(name_ + ": interrupted while waiting for another process's write");
      throw StoreError(name_ + ": " + store_busy_message() + " (" + why + ")");
    }
    throw StoreError(name_ + ": " + why);
  }

  // SQLite's busy handler: called while another connection holds the lock, `count` times so far in
  // this wait. Nonzero: try again. Bounded by store_wait(), told once after a second, ended at once by
  // an interrupt.
  static int on_busy(void* self, int count) { return static_cast<SqliteConnection*>(self)->busy(count); }
  int busy(int count) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point now = Clock::now();
    if (count == 0) {
      busy_since_ = now;
      said_ = false;
      interrupted_ = false;
    }
    const StoreWait& w = store_wait();
    if (w.interrupted && w.interrupted()) {
      interrupted_ = true;
      return 0;
    }
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - busy_since_).count();
    if (waited >= w.max_ms) return 0;
    if (waited >= 1000 && !said_ && w.waiting) {
      w.waiting(store_wait_message(name_));
      said_ = true;
    }
    sqlite3_sleep(20);
    return 1;
  }

  sqlite3_stmt* prepared(const std::string& sql) {
    auto it = statements_.find(sql);
    if (it != statements_.end()) return it->second;
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      fail(rc, sqlite3_errmsg(db_));
    }
    statements_.emplace(sql, stmt);
    return stmt;
  }

  void bind(sqlite3_stmt* stmt, size_t i, const SqlValue& v) {
    const std::string name = "$" + std::to_string(i);
    const int index = sqlite3_bind_parameter_index(stmt, name.c_str());
    if (index == 0) throw StoreError(name_ + ": internal: no parameter " + name + " in the statement");
    int rc = SQLITE_OK;
    if (const auto* n = std::get_if<int64_t>(&v)) {
      rc = sqlite3_bind_int64(stmt, index, *n);
    } else if (const auto* d = std::get_if<double>(&v)) {
      rc = std::isfinite(*d) ? sqlite3_bind_double(stmt, index, *d) : sqlite3_bind_null(stmt, index);
    } else if (const auto* s = std::get_if<std::string>(&v)) {
      rc = sqlite3_bind_text64(stmt, index, s->data(), s->size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    } else {
      rc = sqlite3_bind_null(stmt, index);
    }
    if (rc != SQLITE_OK) fail(rc, sqlite3_errmsg(db_));
  }

  static SqlValue column(sqlite3_stmt* stmt, int c) {
    switch (sqlite3_column_type(stmt, c)) {
      case SQLITE_INTEGER:
        return static_cast<int64_t>(sqlite3_column_int64(stmt, c));
      case SQLITE_FLOAT:
        return sqlite3_column_double(stmt, c);
      case SQLITE_TEXT:
      case SQLITE_BLOB: {
        const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt, c));
        return std::string(p ? p : "", static_cast<size_t>(sqlite3_column_bytes(stmt, c)));
      }
      default:
        return std::monostate{};
    }
  }

  // A path as an SQLite URI's path: '%', '?' and '#' percent-encoded.
  static std::string uri_path(const std::string& path) {
    std::string out;
    for (const char c : path) {
      if (c == '%')
        out += "%25";
      else if (c == '?')
        out += "%3f";
      else if (c == '#')
        out += "%23";
      else
        out += c;
    }
    return out;
  }

  std::string name_;
  sqlite3* db_ = nullptr;
  bool read_only_ = false;  // opened read-only: its folder cannot be written
  std::chrono::steady_clock::time_point busy_since_;
  bool said_ = false;         // the wait was announced
  bool interrupted_ = false;  // an interrupt ended the last wait
  std::map<std::string, sqlite3_stmt*> statements_;
};

}  // namespace

std::unique_ptr<SqlConnection> open_sqlite(const std::string& path) { return std::make_unique<SqliteConnection>(path); }

}  // namespace trainbench
