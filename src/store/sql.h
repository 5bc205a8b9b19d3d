// The one seam between the results store (store.h) and a database: a connection that runs SQL with
// bound parameters only. Two kinds: SQLite (sqlite_connection.cpp, the default, a file) and
// PostgreSQL (a server, for a team). The store's SQL is written once, in the subset both understand,
// with $1, $2, ... placeholders; no value ever becomes part of the SQL text.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace trainbench {

// A store that cannot be opened, read or written. what() is one line, naming the store (a path, or
// a URL with its password left out) and the problem.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown when an interrupt (Ctrl-C, SIGTERM) ended a wait for another writer: the command exits as
// interrupted (130, 143), its results file kept.
class StoreInterrupted : public StoreError {
 public:
  using StoreError::StoreError;
};

// A wait for another writer (SQLite's write lock, PostgreSQL's advisory lock): at most `max_ms`, then a
// StoreError that says so; `waiting` is told once when it has lasted a second (what it waits for and
// how long it will); `interrupted` is asked every 50 ms, and true ends the wait at once with
// StoreInterrupted. The command line sets them once (its interrupt flag, stderr); unset: silent, never.
struct StoreWait {
  int max_ms = 60000;
  std::function<bool()> interrupted;
  std::function<void(const std::string& what)> waiting;
};
void set_store_wait(StoreWait wait);
const StoreWait& store_wait();
// "waiting for <store>: another process is writing to it (up to 60 s; Ctrl-C stops)"
std::string store_wait_message(const std::string& store);
// "still busy with another process's write after 60 s"
std::string store_busy_message();

// A bound parameter or a column value: NULL, an integer, a real or text.
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;
using SqlRow = std::vector<SqlValue>;

// Column readers: a NULL reads as 0, NaN or "".
int64_t sql_int(const SqlValue& v);
double sql_real(const SqlValue& v);
std::string sql_text(const SqlValue& v);

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  // What the store is, for messages: a path, or a URL without its password.
  virtual const std::string& name() const = 0;
  virtual bool is_sqlite() const = 0;
  // Runs `sql` with `params` bound to $1, $2, ...; the rows it returns (none for a statement that
  // returns none). Throws StoreError.
  virtual std::vector<SqlRow> query(const std::string& sql, const std::vector<SqlValue>& params = {}) = 0;
  // A write transaction, taken at once (SQLite: BEGIN IMMEDIATE, so two writers queue for the busy
  // timeout instead of failing on an upgrade); then commit() or rollback().
  virtual void begin_write() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
};

// Opens (creating the file and its folder) an SQLite store: WAL mode, a writer waiting for another as
// store_wait() says, foreign keys on. Throws StoreError.
std::unique_ptr<SqlConnection> open_sqlite(const std::string& path);

// Connects to a PostgreSQL server by URL (postgresql://user@host:port/db?...), with a connect
// timeout of 10 s unless the URL sets one. Throws StoreError; its message never holds the password.
std::unique_ptr<SqlConnection> open_postgresql(const std::string& url);
// What a PostgreSQL store is called in every message and page: "postgresql://user@host:port/db" (a
// socket folder as ?host=), built from libpq's own reading of the URL, never from its text, so no
// password shows however it is spelled (user:pw@, ?password=, a repeated or percent-encoded key).
// Throws StoreError, one line that quotes no part of the URL, when libpq cannot read it or an '@'
// follows the host's '/' (an unencoded '/' in the password, which libpq would read as host and port).
std::string postgresql_store_name(const std::string& url);

// Rolls back unless committed: a write is there whole or not at all.
class WriteTransaction {
 public:
  explicit WriteTransaction(SqlConnection& db) : db_(db) { db_.begin_write(); }
  ~WriteTransaction() {
    if (!done_) db_.rollback();
  }
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void commit() {
    db_.commit();
    done_ = true;
  }

 private:
  SqlConnection& db_;
  bool done_ = false;
};

}  // namespace trainbench
