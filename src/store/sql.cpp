// What both connections share: reading a column, a URL fit to be shown, and the PostgreSQL entry
// point of a build without libpq.
#include <limits>

#include "store/sql.h"

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

std::string url_without_password(const std::string& url) {
  std::string s = url;
  // user:password@host -> user@host
  const auto scheme = s.find("://");
  if (scheme != std::string::npos) {
    const auto authority = scheme + 3;
    // The last '@' before the path: a password may hold an '@' of its own.
    const auto end = s.find_first_of("/?", authority);
    const auto at = s.rfind('@', end == std::string::npos ? std::string::npos : end);
    if (at != std::string::npos && at >= authority) {
      const auto colon = s.find(':', authority);
      if (colon != std::string::npos && colon < at) s.erase(colon, at - colon);
    }
  }
  // ?password=...&  ->  dropped
  for (const std::string key : {"?password=", "&password="}) {
    const auto p = s.find(key);
    if (p == std::string::npos) continue;
    const auto end = s.find('&', p + 1);
    if (key[0] == '?') {
      s.erase(p + 1, end == std::string::npos ? std::string::npos : end + 1 - (p + 1));
      if (s.back() == '?') s.pop_back();
    } else {
      s.erase(p, end == std::string::npos ? std::string::npos : end - p);
    }
  }
  return s;
}

#ifndef TRAINBENCH_WITH_POSTGRESQL
std::unique_ptr<SqlConnection> open_postgresql(const std::string& url) {
  throw StoreError(url_without_password(url) +
                   ": this trainbench was built without PostgreSQL (install libpq-dev and build again)");
}
#endif

}  // namespace trainbench
