// A results file: {"schema_version": 1, "context": {...}, "benchmarks": [...]}, written atomically.
#pragma once
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "results/context.h"
#include "results/op_record.h"
#include "results/record.h"

namespace trainbench {

constexpr int kResultsSchemaVersion = 1;

// A results (or journal) file that cannot be read or written. what() is one line:
// "<path>: <problem>".
class ResultsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ResultsFile {
  int schema_version = kResultsSchemaVersion;
  Context context;
  std::vector<Record> benchmarks;
  std::vector<OpRecord> ops;           // `trainbench op`: layers timed alone ("ops", written when present)
  std::optional<Explanation> explain;  // `trainbench explain`: the step's breakdown ("explain", when present)
};

nlohmann::json to_json(const ResultsFile& f);
// The file's text: pretty-printed JSON (indent 2) with a final newline.
std::string results_to_string(const ResultsFile& f);

// `source` names the input in error messages (a path, or "<stdin>").
ResultsFile results_from_json(const nlohmann::json& j, const std::string& source);
ResultsFile results_from_string(const std::string& text, const std::string& source);

// Writes path + ".tmp.<pid>", fsyncs it, renames it over `path`: readers see the old file or the new
// one, never half of one. Throws ResultsError.
void write_results_atomic(const std::string& path, const ResultsFile& f);
// Any text, the same way: a temporary file beside `path`, synced, renamed into place. Throws ResultsError.
void write_text_atomic(const std::string& path, const std::string& text);

// Throws ResultsError for a missing, empty, truncated or foreign file, an unsupported schema_version,
// or a bad field (naming the benchmark index and field).
ResultsFile read_results(const std::string& path);

namespace detail {
// Writes `text` to `fd` in full and fsyncs it; false on any failure (errno set).
bool write_all_and_sync(int fd, const std::string& text);
// Parses JSON text; a number that overflows a double throws std::out_of_range naming its field
// ('field "throughput": number overflow parsing ...'), other errors nlohmann's parse_error.
nlohmann::json parse_json_naming_overflow(const std::string& text);
// The parse error of nlohmann::json without its "[json.exception...] " prefix.
std::string short_json_error(const std::exception& e);
}  // namespace detail

}  // namespace trainbench
