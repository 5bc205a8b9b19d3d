// The console table: fixed-width columns, so rows printed live as cases end line up with the header.
#include <ostream>

#include "results/printer.h"
#include "results/printer_utilization.h"
#include "results/reporter.h"

namespace trainbench {

namespace {

const TextTable& console_table() {
  static const TextTable table(detail::table_columns());
  return table;
}

// Rows as cases end. A live sweep starts with the header at once (the machine is in the results file);
// a file printed whole starts with its machine line.
class TableReporter final : public Reporter {
 public:
  explicit TableReporter(std::ostream& out) : out_(out) {}
  void begin(const Context& context, Feed feed) override {
    if (feed == Feed::file) out_ << terminal_text(detail::context_summary(context)) << "\n\n";
    out_ << table_header() << std::flush;
  }
  void record(const Record& r) override { out_ << table_row(r) << std::flush; }
  void end(const ResultsFile& file) override { out_ << table_footer(file.benchmarks) << std::flush; }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<Reporter> make_table_reporter(std::ostream& out) { return std::make_unique<TableReporter>(out); }

std::string table_header() { return console_table().header() + console_table().rule(); }

std::string table_row(const Record& r) { return console_table().line(detail::table_cells(r)); }

std::string table_footer(const std::vector<Record>& records) {
  return noise_footer(records) + settling_footer(records) + data_footer(records) + utilization_footer(records);
}

std::string print_table(const std::vector<Record>& records, const Context* context) {
  std::string out;
  if (context) out += terminal_text(detail::context_summary(*context)) + "\n\n";
  out += table_header();
  for (const auto& r : records) out += table_row(r);
  return out + table_footer(records);
}

}  // namespace trainbench
