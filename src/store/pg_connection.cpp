// The PostgreSQL connection (libpq): many machines keep their runs in one server. Credentials come
// from the URL, PGPASSWORD or ~/.pgpass (libpq reads them). The store's name in every message is built
// from libpq's own reading of the URL (user, host, port, database), never from its text, and every
// message of libpq's shown is scrubbed of the password and of any quoted value that is not one of those.
#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "store/sql.h"

namespace trainbench {

namespace {

// libpq's messages run over lines ("...failed: Connection refused\n\tIs the server running...").
std::string one_line(const char* text) {
  std::string s = text ? text : "";
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == '\n' || c == '\t' || c == '\r' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

using ConninfoPtr = std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)>;

// libpq's reading of the URL: keyword -> value (the options it sets), or a StoreError whose message
// holds no quoted part of the URL.
std::map<std::string, std::string> parsed_options(const std::string& url) {
  char* error = nullptr;
  ConninfoPtr options(PQconninfoParse(url.c_str(), &error), &PQconninfoFree);
  if (!options) {
    std::string why = error ? one_line(error) : "out of memory";
    PQfreemem(error);
    // libpq quotes the offending token ("invalid percent-encoded token: \"pa%zz\""): it may be the password.
    std::string shown;
    bool quoted = false;
    for (char c : why) {
      if (c == '"') {
        if (!quoted) shown += "\"...\"";
        quoted = !quoted;
      } else if (!quoted) {
        shown += c;
      }
    }
    throw StoreError("a postgresql:// store URL that libpq cannot read (" + shown + "; the URL is not shown)");
  }
  std::map<std::string, std::string> set;
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    if (o->val != nullptr && *o->val != '\0') set[o->keyword] = o->val;
  }
  return set;
}

// libpq ends the user name and password at the first '@' before the first '/' after "postgresql://".
// Any other '@' means an unencoded '@', '/' in the credentials, which libpq would read as part of the
// host, port or database (and echo in its errors): refused, so the URL's credentials are exact.
void check_one_at(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return;
  const auto first = url.find('@', scheme + 3);
  if (first == std::string::npos) return;
  const auto slash = url.find('/', scheme + 3);
  if ((slash != std::string::npos && slash < first) || url.find('@', first + 1) != std::string::npos) {
    throw StoreError(
        "a postgresql:// store URL with more than one '@' or one after the host's '/': encode '@' as %40 and '/' "
        "as %2F in the user name, password and database (the URL is not shown)");
  }
}

struct PgName {
  std::string name;                  // what messages show
  std::vector<std::string> visible;  // the values shown in it: a quoted one of these may stay in a message
  std::string password;              // the one that must never be shown
};

PgName pg_name(const std::string& url) {
  check_one_at(url);
  const std::map<std::string, std::string> o = parsed_options(url);
  auto get = [&o](const char* key) {
    const auto it = o.find(key);
    return it == o.end() ? std::string() : it->second;
  };
  PgName n;
  n.password = get("password");
  const std::string user = get("user"), host = get("host"), hostaddr = get("hostaddr"), port = get("port"),
                    db = get("dbname");
  const std::string where = host.empty() ? hostaddr : host;
  n.name = "postgresql://" + (user.empty() ? "" : user + "@");
  const bool socket = !where.empty() && where[0] == '/';
  if (!socket) n.name += where + (port.empty() ? "" : ":" + port);
  n.name += "/" + db;
  if (socket) n.name += "?host=" + where + (port.empty() ? "" : "&port=" + port);
  for (const std::string& v : {user, host, hostaddr, port, db}) {
    if (!v.empty()) n.visible.push_back(v);
  }
  return n;
}

// A libpq message fit to show: the password replaced, and every quoted value that is not one the
// store's name shows replaced by "...".
std::string scrubbed(std::string text, const PgName& n) {
  if (!n.password.empty()) {
    for (size_t at = text.find(n.password); at != std::string::npos; at = text.find(n.password, at)) {
      text.replace(at, n.password.size(), "***");
    }
  }
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const size_t close = text[i] == '"' ? text.find('"', i + 1) : std::string::npos;
    if (close == std::string::npos) {
      out += text[i];
      continue;
    }
    const std::string value = text.substr(i + 1, close - i - 1);
    const bool shown = std::find(n.visible.begin(), n.visible.end(), value) != n.visible.end();
    out += shown ? "\"" + value + "\"" : "\"...\"";
    i = close;
  }
  return out;
}

class PgConnection final : public SqlConnection {
 public:
  explicit PgConnection(const std::string& url) : pg_(pg_name(url)), name_(pg_.name) {
    // connect_timeout first: a timeout in the URL itself, expanded after it, wins.
    const char* keys[] = {"connect_timeout", "application_name", "dbname", nullptr};
    const char* values[] = {"10", "trainbench", url.c_str(), nullptr};
    conn_ = PQconnectdbParams(keys, values, 1);
    if (conn_ == nullptr) throw StoreError(name_ + ": cannot connect: out of memory");
    if (PQstatus(conn_) != CONNECTION_OK) {
      const std::string why = scrubbed(one_line(PQerrorMessage(conn_)), pg_);
      PQfinish(conn_);
      conn_ = nullptr;
      throw StoreError(name_ + ": cannot connect: " + why);
    }
    query("SET client_min_messages TO warning");  // no NOTICE lines on stderr from IF NOT EXISTS
  }
  ~PgConnection() override { PQfinish(conn_); }

  const std::string& name() const override { return name_; }
  bool is_sqlite() const override { return false; }

  std::vector<SqlRow> query(const std::string& sql, const std::vector<SqlValue>& params = {}) override {
    std::vector<std::string> text(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (size_t i = 0; i < params.size(); ++i) {
      if (const auto* n = std::get_if<int64_t>(&params[i])) {
        text[i] = std::to_string(*n);
      } else if (const auto* d = std::get_if<double>(&params[i])) {
        if (!std::isfinite(*d)) continue;  // NULL, as SQLite stores it
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", *d);
        text[i] = buf;
      } else if (const auto* s = std::get_if<std::string>(&params[i])) {
        text[i] = *s;
      } else {
        continue;
      }
      values[i] = text[i].c_str();
    }
    PGresult* res = PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, values.data(), nullptr,
                                 nullptr, 0);
    const ExecStatusType status = PQresultStatus(res);
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
      std::string why = scrubbed(one_line(res ? PQresultErrorMessage(res) : PQerrorMessage(conn_)), pg_);
      if (why.rfind("ERROR: ", 0) == 0) why = why.substr(7);
      PQclear(res);
      if (PQstatus(conn_) != CONNECTION_OK) throw StoreError(name_ + ": the connection was lost: " + why);
      throw StoreError(name_ + ": " + why);
    }
    std::vector<SqlRow> rows;
    const int n = PQntuples(res), m = PQnfields(res);
    rows.reserve(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      SqlRow row(static_cast<size_t>(m));
      for (int c = 0; c < m; ++c) {
        if (PQgetisnull(res, r, c)) continue;
        const char* v = PQgetvalue(res, r, c);
        switch (PQftype(res, c)) {
          case 20: case 21: case 23:  // int8, int2, int4
            row[static_cast<size_t>(c)] = static_cast<int64_t>(std::strtoll(v, nullptr, 10));
            break;
          case 700: case 701: case 1700:  // float4, float8, numeric
            row[static_cast<size_t>(c)] = std::strtod(v, nullptr);
            break;
          default:
            row[static_cast<size_t>(c)] = std::string(v, static_cast<size_t>(PQgetlength(res, r, c)));
        }
      }
      rows.push_back(std::move(row));
    }
    PQclear(res);
    return rows;
  }

  // One writer at a time, as SQLite has it: two stores created at once would otherwise race in the
  // catalog (CREATE TABLE IF NOT EXISTS is not safe against a concurrent twin).
  void begin_write() override {
    query("BEGIN");
    // The wait for another writer is bounded (lock_timeout, this transaction only), said after a second
    // and ended at once by an interrupt (the query is cancelled), as SQLite's is.
    // A failed or ended wait rolls the transaction back here: the caller's WriteTransaction was never
    // made, and the connection must not stay in an aborted transaction.
    try {
      query("SET LOCAL lock_timeout = '" + std::to_string(store_wait().max_ms) + "ms'");
      wait_for_lock("SELECT pg_advisory_xact_lock(7204917731)");  // trainbench's key; released at COMMIT/ROLLBACK
    } catch (...) {
      rollback();
      throw;
    }
  }
  void commit() override { query("COMMIT"); }
  void rollback() noexcept override {
    PGresult* res = PQexec(conn_, "ROLLBACK");
    PQclear(res);
  }

 private:
  // Runs `sql` (no parameters, no rows wanted) without blocking: the socket is polled every 50 ms, an
  // interrupt cancels the query and throws StoreInterrupted, and the wait is announced once after 1 s.
  void wait_for_lock(const char* sql) {
    if (PQsendQuery(conn_, sql) == 0) {
      throw StoreError(name_ + ": " + scrubbed(one_line(PQerrorMessage(conn_)), pg_));
    }
    const StoreWait& w = store_wait();
    const auto start = std::chrono::steady_clock::now();
    bool said = false;
    while (PQisBusy(conn_) != 0) {
      if (w.interrupted && w.interrupted()) {
        if (PGcancel* cancel = PQgetCancel(conn_)) {
          char err[256];
          (void)PQcancel(cancel, err, sizeof err);
          PQfreeCancel(cancel);
        }
        while (PGresult* r = PQgetResult(conn_)) PQclear(r);
        throw StoreInterrupted(name_ + ": interrupted while waiting for another process's write");
      }
      pollfd p{PQsocket(conn_), POLLIN, 0};
      (void)::poll(&p, 1, 50);
      if (PQconsumeInput(conn_) == 0) {
        throw StoreError(name_ + ": the connection was lost: " + scrubbed(one_line(PQerrorMessage(conn_)), pg_));
      }
      const auto waited = std::chrono::steady_clock::now() - start;
      if (!said && waited >= std::chrono::seconds(1) && w.waiting) {
        w.waiting(store_wait_message(name_));
        said = true;
      }
    }
    std::string why;
    while (PGresult* r = PQgetResult(conn_)) {
      const ExecStatusType status = PQresultStatus(r);
      if (why.empty() && status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
        const char* code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        why = code != nullptr && std::string(code) == "55P03"  // lock_not_available: lock_timeout ran out
                  ? store_busy_message()
                  : scrubbed(one_line(PQresultErrorMessage(r)), pg_);
      }
      PQclear(r);
    }
    if (!why.empty()) throw StoreError(name_ + ": " + why);
  }

  PgName pg_;
  std::string name_;
  PGconn* conn_ = nullptr;
};

}  // namespace

std::unique_ptr<SqlConnection> open_postgresql(const std::string& url) { return std::make_unique<PgConnection>(url); }

std::string postgresql_store_name(const std::string& url) { return pg_name(url).name; }

}  // namespace trainbench
