// Results file read and write. Reading is strict and every failure is one line naming the file.
#include "results/results_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/input_file.h"

namespace trainbench {

namespace detail {

bool write_all_and_sync(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return ::fsync(fd) == 0;
}

std::string short_json_error(const std::exception& e) {
  std::string msg = e.what();
  if (msg.rfind("[json.exception.", 0) == 0) {
    const auto close = msg.find("] ");
    if (close != std::string::npos) msg = msg.substr(close + 2);
  }
  return msg;
}

}  // namespace detail

nlohmann::json to_json(const ResultsFile& f) {
  nlohmann::json benchmarks = nlohmann::json::array();
  for (const auto& r : f.benchmarks) benchmarks.push_back(to_json(r));
  nlohmann::json j = {
      {"schema_version", f.schema_version}, {"context", to_json(f.context)}, {"benchmarks", benchmarks}};
  if (!f.ops.empty()) {
    j["ops"] = nlohmann::json::array();
    for (const auto& o : f.ops) j["ops"].push_back(to_json(o));
  }
  if (f.explain) j["explain"] = to_json(*f.explain);
  return j;
}

std::string results_to_string(const ResultsFile& f) { return to_json(f).dump(2) + "\n"; }

ResultsFile results_from_json(const nlohmann::json& j, const std::string& source) {
  auto fail = [&](const std::string& problem) -> ResultsError { return ResultsError(source + ": " + problem); };
  if (!j.is_object() || !j.contains("schema_version")) throw fail("not a trainbench results file (no schema_version)");
  const auto& version = j["schema_version"];
  if (!version.is_number_integer())
    throw fail("schema_version " + version.dump() + " is not supported (this trainbench reads " +
               std::to_string(kResultsSchemaVersion) + ")");
  if (version.get<int64_t>() != kResultsSchemaVersion)
    throw fail("schema_version " + std::to_string(version.get<int64_t>()) +
               " is not supported (this trainbench reads " + std::to_string(kResultsSchemaVersion) + ")");
  ResultsFile f;
  f.schema_version = kResultsSchemaVersion;
  if (!j.contains("context")) throw fail("no \"context\" object");
  try {
    f.context = context_from_json(j["context"]);
  } catch (const std::runtime_error& e) {
    throw fail(std::string("context: ") + e.what());
  }
  if (!j.contains("benchmarks") || !j["benchmarks"].is_array()) throw fail("no \"benchmarks\" array");
  const auto& benchmarks = j["benchmarks"];
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    try {
      f.benchmarks.push_back(record_from_json(benchmarks[i]));
    } catch (const std::runtime_error& e) {
      std::string where = "benchmarks[" + std::to_string(i) + "]";
      if (benchmarks[i].is_object() && benchmarks[i].contains("name") && benchmarks[i]["name"].is_string())
        where += " (" + benchmarks[i]["name"].get<std::string>() + ")";
      throw fail(where + ": " + e.what());
    }
  }
  if (j.contains("ops")) {
    const auto& ops = j["ops"];
    if (!ops.is_array()) throw fail("\"ops\" is not an array");
    for (size_t i = 0; i < ops.size(); ++i) {
      try {
        f.ops.push_back(op_record_from_json(ops[i]));
      } catch (const std::runtime_error& e) {
        throw fail("ops[" + std::to_string(i) + "]: " + e.what());
      }
    }
  }
  if (j.contains("explain")) {
    try {
      f.explain = explanation_from_json(j["explain"]);
    } catch (const std::runtime_error& e) {
      throw fail(std::string("explain: ") + e.what());
    }
  }
  return f;
}

namespace detail {

nlohmann::json parse_json_naming_overflow(const std::string& text) {
  // A number too large for a double (1e999) stops the parser with out_of_range, which knows no field:
  // the last key seen is that number's.
  std::string last_key;
  const nlohmann::json::parser_callback_t track = [&](int, nlohmann::json::parse_event_t event,
                                                      nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::key) last_key = parsed.get<std::string>();
    return true;
  };
  try {
    return nlohmann::json::parse(text, track);
  } catch (const nlohmann::json::out_of_range& e) {
    throw std::out_of_range("field \"" + last_key + "\": " + short_json_error(e));
  }
}

}  // namespace detail

ResultsFile results_from_string(const std::string& text, const std::string& source) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw ResultsError(source + ": file is empty");
  nlohmann::json j;
  try {
    j = detail::parse_json_naming_overflow(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw ResultsError(source + ": not valid JSON (truncated?): " + detail::short_json_error(e));
  } catch (const std::out_of_range& e) {
    throw ResultsError(source + ": " + e.what());
  }
  return results_from_json(j, source);
}

void write_results_atomic(const std::string& path, const ResultsFile& f) {
  write_text_atomic(path, results_to_string(f));
}

void write_text_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw ResultsError(path + ": cannot write " + tmp + ": " + std::strerror(errno));
  const bool written = detail::write_all_and_sync(fd, text);
  const int saved = errno;
  ::close(fd);
  if (!written) {
    ::unlink(tmp.c_str());
    throw ResultsError(path + ": cannot write " + tmp + ": " + std::strerror(saved));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw ResultsError(path + ": cannot rename " + tmp + " into place: " + std::strerror(err));
  }
  // Make the rename itself durable.
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

ResultsFile read_results(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path);  // a directory, FIFO or device is refused, never read
  } catch (const std::runtime_error& e) {
    throw ResultsError(e.what());
  }
  return results_from_string(text, path);
}

}  // namespace trainbench
