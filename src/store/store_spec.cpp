// Which store: a --store value, TRAINBENCH_STORE or the default path, and a query's filters
// (store.h, docs/store.md).
#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/value_rules.h"
#include "store/sql.h"
#include "store/store.h"

namespace trainbench {

StoreSpec parse_store_spec(const std::string& text, const std::string& source) {
  StoreSpec s;
  if (text.empty()) throw InputError(source + ": an empty store name (give a path, a postgresql:// URL or none)");
  if (text == "none") return s;
  if (text.rfind("postgresql://", 0) == 0 || text.rfind("postgres://", 0) == 0) {
    s.kind = StoreSpec::Kind::postgresql;
    s.where = text;
    try {
      (void)postgresql_store_name(text);  // read by libpq now: a URL it cannot read is refused before anything runs
    } catch (const StoreError& e) {
      throw InputError(source + ": " + e.what());
    }
    return s;
  }
  s.kind = StoreSpec::Kind::sqlite;
  s.where = text.rfind("sqlite:", 0) == 0 ? text.substr(7) : text;
  if (s.where.empty()) throw InputError(source + ": 'sqlite:' names no file");
  if (const auto scheme = s.where.find("://"); scheme != std::string::npos) {
    // Only the scheme is shown: the rest of a URL may hold a password.
    throw InputError(source + ": '" + s.where.substr(0, scheme) +
                     "://...' is not a store this trainbench knows (a path, postgresql://... or none)");
  }
  return s;
}

std::string default_store_path() {
  namespace fs = std::filesystem;
  if (const char* d = std::getenv("XDG_DATA_HOME"); d != nullptr && *d != '\0') {
    return (fs::path(d) / "trainbench" / "results.sqlite").string();
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return (fs::path(h) / ".local" / "share" / "trainbench" / "results.sqlite").string();
  }
  return "";
}

StoreSpec choose_store(const std::string& flag, bool no_store) {
  if (no_store) return {};
  if (!flag.empty()) return parse_store_spec(flag, "--store");
  if (const char* env = std::getenv("TRAINBENCH_STORE"); env != nullptr && *env != '\0') {
    return parse_store_spec(env, "TRAINBENCH_STORE");
  }
  const std::string path = default_store_path();
  if (path.empty()) return {};
  return {StoreSpec::Kind::sqlite, path};
}

RunQuery parse_run_query(const std::string& text) {
  RunQuery q;
  if (text.empty()) return q;
  std::set<std::string> seen;
  for (const std::string& pair : split_list(text, "store:" + text)) {
    const auto eq = pair.find('=');
    const std::string key = pair.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : pair.substr(eq + 1);
    const std::string where = "store:" + text + ": '" + pair + "'";
    if (eq == std::string::npos || value.empty()) throw InputError(where + " is not key=value");
    if (!seen.insert(key).second) throw InputError(where + ": " + key + " is given twice");
    auto count = [&](int64_t* out) {
      if (!whole_number_problem(value, out).empty() || *out < 1)
        throw InputError(where + ": must be a whole number >= 1");
    };
    if (key == "device") {
      q.device = value;
    } else if (key == "machine") {
      q.machine = value;
    } else if (key == "libtorch") {
      q.libtorch = value;
    } else if (key == "model") {
      q.model = value;
    } else if (key == "since") {
      if (const std::string why = utc_time_problem(value); !why.empty()) {
        throw InputError(where + ": " + value + " " + why + " (UTC, optionally with a time)");
      }
      q.since = value;
    } else if (key == "run") {
      count(&q.run);
    } else if (key == "last") {
      count(&q.last);
    } else {
      throw InputError(where + ": unknown key '" + key + "' (device, machine, libtorch, model, since, run, last)");
    }
  }
  return q;
}

}  // namespace trainbench
