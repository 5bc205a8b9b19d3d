// The PostgreSQL connection (libpq): many machines keep their runs in one server. Credentials come
// from the URL, PGPASSWORD or ~/.pgpass (libpq reads them); the store's name in every message is the
// URL with its password left out.
#include <libpq-fe.h>

#include <cmath>
#include <cstdio>

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

class PgConnection final : public SqlConnection {
 public:
  explicit PgConnection(const std::string& url) : name_(url_without_password(url)) {
    // connect_timeout first: a timeout in the URL itself, expanded after it, wins.
    const char* keys[] = {"connect_timeout", "application_name", "dbname", nullptr};
    const char* values[] = {"10", "trainbench", url.c_str(), nullptr};
    conn_ = PQconnectdbParams(keys, values, 1);
    if (conn_ == nullptr) throw StoreError(name_ + ": cannot connect: out of memory");
    if (PQstatus(conn_) != CONNECTION_OK) {
      const std::string why = one_line(PQerrorMessage(conn_));
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
      std::string why = one_line(res ? PQresultErrorMessage(res) : PQerrorMessage(conn_));
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
    query("SELECT pg_advisory_xact_lock(7204917731)");  // trainbench's key; released at COMMIT/ROLLBACK
  }
  void commit() override { query("COMMIT"); }
  void rollback() noexcept override {
    PGresult* res = PQexec(conn_, "ROLLBACK");
    PQclear(res);
  }

 private:
  std::string name_;
  PGconn* conn_ = nullptr;
};

}  // namespace

std::unique_ptr<SqlConnection> open_postgresql(const std::string& url) { return std::make_unique<PgConnection>(url); }

}  // namespace trainbench
