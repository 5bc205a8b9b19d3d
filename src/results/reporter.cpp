// The registry of output formats: one line per format, its reporter in its own file.
#include "results/reporter.h"

#include <ostream>
#include <sstream>
#include <stdexcept>

#include "results/printer.h"

namespace trainbench {

// Defined by the streaming formats' files.
std::unique_ptr<Reporter> make_table_reporter(std::ostream& out);  // printer_table.cpp
std::unique_ptr<Reporter> make_jsonl_reporter(std::ostream& out);  // reporter_jsonl.cpp

namespace {

// A format printed whole from the results file, once the run has written it.
class WholeFileReporter final : public Reporter {
 public:
  using Print = std::function<std::string(const ResultsFile&)>;
  WholeFileReporter(std::ostream& out, Print print) : out_(out), print_(std::move(print)) {}
  void end(const ResultsFile& file) override { out_ << print_(file) << std::flush; }

 private:
  std::ostream& out_;
  Print print_;
};

ReporterFactory at_end(WholeFileReporter::Print print) {
  return [print](std::ostream& out) { return std::make_unique<WholeFileReporter>(out, print); };
}

}  // namespace

const std::vector<ReporterInfo>& reporters() {
  static const std::vector<ReporterInfo> all = {
      {"table", {}, "console table, a row as each case ends", true, make_table_reporter},
      {"md", {"markdown"}, "GitHub markdown table, at the end", false, at_end([](const ResultsFile& f) {
         return print_markdown(f.benchmarks, &f.context);
       })},
      {"csv", {}, "a row per case with every scalar field, at the end", false, at_end([](const ResultsFile& f) {
         return print_csv(f.benchmarks);
       })},
      {"json", {}, "the results file, at the end", false, at_end(print_json)},
      {"jsonl", {}, "the context, then a compact JSON line per case as it ends", false, make_jsonl_reporter},
  };
  return all;
}

std::string unknown_format_message(const std::string& name, const std::vector<std::string>& known) {
  std::string list;
  for (size_t i = 0; i < known.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == known.size() ? " or " : ", ") + known[i];
  }
  return "unknown output format \"" + name + "\" (expected " + list + ")";
}

const ReporterInfo& find_reporter(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& r : reporters()) {
    if (r.name == name) return r;
    for (const auto& alias : r.aliases) {
      if (alias == name) return r;
    }
    names.push_back(r.name);
  }
  throw std::invalid_argument(unknown_format_message(name, names));
}

std::string reporters_help() {
  std::string s;
  for (const auto& r : reporters()) s += (s.empty() ? "" : ", ") + r.name + " (" + r.help + ")";
  return s;
}

std::string print_records(const std::string& format, const ResultsFile& file) {
  std::ostringstream out;
  const std::unique_ptr<Reporter> reporter = find_reporter(format).make(out);
  reporter->begin(file.context, Feed::file);
  for (const auto& r : file.benchmarks) reporter->record(r);
  reporter->end(file);
  return out.str();
}

}  // namespace trainbench
