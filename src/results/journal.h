// The journal: a JSON-lines file next to the output (output + ".journal") that gets one line per case
// as soon as the case ends, flushed and fsync'd, so a killed sweep keeps every finished case and
// `--resume` can skip them. Line 1 is a header {"journal": 1, "context": {...}, "plan": {...}}; every
// other line is one Record as in a results file.
//
// The journal is also the run's lock: a run holds flock(LOCK_EX) on it from before it reads or truncates
// it until it has written the results file, so a second run on the same output is refused (JournalBusy,
// naming the holder's pid) instead of both writing and one losing its cases.
#pragma once
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "results/context.h"
#include "results/record.h"

namespace trainbench {

constexpr int kJournalVersion = 1;

std::string journal_path_for(const std::string& output_path);  // output + ".journal"

// Another process holds the journal's lock. what(): "<path> is in use by another trainbench run (pid N)".
class JournalBusy : public std::runtime_error {
 public:
  JournalBusy(const std::string& what, long holder_pid) : std::runtime_error(what), pid(holder_pid) {}
  long pid;  // 0 when it could not be found
};

// What a plan is, for `--resume` to tell whether the journal was written by the same one: its case
// descriptors and its measurement settings (flag -> value as handed to each case).
struct PlanIdentity {
  std::vector<std::string> cases;
  std::map<std::string, std::string> settings;
};
// "" when the same; else one line of what differs, e.g. "--max-time was 60, now 3; 2 case(s) only in the
// journal's plan (resnet18:b8:fp32:nchw:cpu, ...)". The order of the cases does not matter.
std::string plan_difference(const PlanIdentity& journal, const PlanIdentity& now);

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

  // Takes the run's lock on `path` (creating the file if need be) without changing what is in it.
  // Throws JournalBusy when another process holds it, ResultsError when it cannot be opened.
  void lock(const std::string& path);
  // Locks (unless lock(path) came first), then starts or continues the journal. Throws ResultsError
  // naming the file. On resume a truncated last line (a kill mid-write) is cut off first, so the next
  // line starts clean. `plan` goes into a fresh header.
  void open(const std::string& path, const Context& context, Mode mode = Mode::fresh,
            const std::optional<PlanIdentity>& plan = std::nullopt);
  // One line, written with a single write() and fsync'd before returning. Throws ResultsError naming
  // the reason (errno's text: "No space left on device"); a line written in part is cut off first.
  void append(const Record& record);
  void close();
  const std::string& path() const { return path_; }

 private:
  void write_line(const std::string& line);
  int fd_ = -1;
  std::string path_;
  bool created_ = false;  // lock() made the file: close() removes it again if nothing was written
};

struct JournalContents {
  std::optional<Context> context;    // from the header line; absent if the journal has none
  std::optional<PlanIdentity> plan;  // from the header line; absent in journals written before it
  std::vector<Record> records;
};

// Skips a final truncated line (no newline and not valid JSON: a kill mid-write); throws ResultsError
// "<path>:<line>: ..." for a missing file or garbage anywhere else.
JournalContents read_journal(const std::string& path);

}  // namespace trainbench
