// The journal: a JSON-lines file next to the output (output + ".journal") that gets one line per case
// as soon as the case ends, flushed and fsync'd, so a killed sweep keeps every finished case and
// `--resume` can skip them. Line 1 is a header {"journal": 1, "context": {...}}; every other line is
// one Record as in a results file.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "results/context.h"
#include "results/record.h"

namespace trainbench {

constexpr int kJournalVersion = 1;

std::string journal_path_for(const std::string& output_path);  // output + ".journal"

class Journal {
 public:
  enum class Mode {
    fresh,   // start a new journal: truncate, write the header with `context`
    resume,  // keep what is there (header and records) and append; a missing or empty file starts fresh
  };

  Journal() = default;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal();

  // Throws ResultsError naming the file. On resume a truncated last line (a kill mid-write) is cut off
  // first, so the next line starts clean.
  void open(const std::string& path, const Context& context, Mode mode = Mode::fresh);
  // One line, written with a single write() and fsync'd before returning. Throws ResultsError.
  void append(const Record& record);
  void close();
  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  void write_line(const std::string& line);
  int fd_ = -1;
  std::string path_;
};

struct JournalContents {
  std::optional<Context> context;  // from the header line; absent if the journal has none
  std::vector<Record> records;
};

// Skips a final truncated line (no newline and not valid JSON: a kill mid-write); throws ResultsError
// "<path>:<line>: ..." for a missing file or garbage anywhere else.
JournalContents read_journal(const std::string& path);

}  // namespace trainbench
