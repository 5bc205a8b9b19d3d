// What both connections share: reading a column, and the PostgreSQL entry points of a build without
// libpq.
#include "store/sql.h"

#include <cstdio>
#include <limits>

namespace trainbench {

int64_t sql_int(const SqlValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return static_cast<int64_t>(*d);
  return 0;
}

double sql_real(const SqlValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::numeric_limits<double>::quiet_NaN();
}

std::string sql_text(const SqlValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  return "";
}

#ifndef TRAINBENCH_WITH_POSTGRESQL
// Without libpq nothing can read the URL, so nothing of it is shown.
std::string postgresql_store_name(const std::string&) { return "postgresql://(not read: built without libpq)"; }

std::unique_ptr<SqlConnection> open_postgresql(const std::string&) {
  throw StoreError("a postgresql:// store: this trainbench was built without PostgreSQL (install libpq-dev and build again)");
}
#endif

namespace {
StoreWait& wait_settings() {
  static StoreWait w;
  return w;
}
}  // namespace

void set_store_wait(StoreWait wait) { wait_settings() = std::move(wait); }
const StoreWait& store_wait() { return wait_settings(); }

namespace {
std::string wait_seconds() {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", store_wait().max_ms / 1000.0);
  return buf;
}
}  // namespace

std::string store_wait_message(const std::string& store) {
  return "waiting for " + store + ": another process is writing to it (up to " + wait_seconds() + "; Ctrl-C stops)";
}

std::string store_busy_message() { return "still busy with another process's write after " + wait_seconds(); }

}  // namespace trainbench
