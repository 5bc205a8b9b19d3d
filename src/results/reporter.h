// Reporters (as google/benchmark's BenchmarkReporter): `run` hands one the context, then each Record
// as its case ends, then the whole results file. Streaming formats print in record() (the console
// table's rows, JSON lines); whole-file formats print in end() (markdown, csv, json). A registry maps
// each --format name to its reporter; the names and help text the CLI lists come from it.
// A new format is one file defining its factory, plus its line in the registry (reporter.cpp).
#pragma once
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "results/context.h"
#include "results/record.h"
#include "results/results_file.h"

namespace trainbench {

// Where the records come from: a sweep hands each one over as its case ends; a file has them all.
enum class Feed { live, file };

class Reporter {
 public:
  virtual ~Reporter() = default;
  // Once, before the first record.
  virtual void begin(const Context& context, Feed feed) { (void)context, (void)feed; }
  // As each case ends (every record of the file, for Feed::file).
  virtual void record(const Record& r) { (void)r; }
  // Once, with every record of the run in plan order (cases measured before a --resume included).
  virtual void end(const ResultsFile& file) { (void)file; }
};

using ReporterFactory = std::function<std::unique_ptr<Reporter>(std::ostream& out)>;

struct ReporterInfo {
  std::string name;                  // as --format takes it
  std::vector<std::string> aliases;  // other names it answers to ("markdown" for md)
  std::string help;                  // for --format's help
  bool console = false;              // text for a terminal: run's other notes may follow it on stdout
  ReporterFactory make;              // writes to `out`, flushing as it goes
};

// Every format, in the order --format's help lists them.
const std::vector<ReporterInfo>& reporters();
// By name or alias; throws std::invalid_argument: unknown output format "xml" (expected table, ...).
const ReporterInfo& find_reporter(const std::string& name);
// For --format's help: "table (console table, ...), md (...), ...".
std::string reporters_help();

// `unknown output format "NAME" (expected a, b or c)`: the message of every --format lookup.
std::string unknown_format_message(const std::string& name, const std::vector<std::string>& known);

// The whole file through the named reporter (begin, every record, end) as text.
std::string print_records(const std::string& format, const ResultsFile& file);

}  // namespace trainbench
