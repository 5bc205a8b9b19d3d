// The console table: fixed-width columns, so rows printed live as cases end line up with the header.
#include "results/printer.h"
#include "results/printer_utilization.h"

namespace trainbench {

namespace {

const TextTable& console_table() {
  static const TextTable table(detail::table_columns());
  return table;
}

}  // namespace

std::string table_header() { return console_table().header() + console_table().rule(); }

std::string table_row(const Record& r) { return console_table().line(detail::table_cells(r)); }

std::string table_footer(const std::vector<Record>& records) {
  return noise_footer(records) + data_footer(records) + utilization_footer(records);
}

std::string print_table(const std::vector<Record>& records, const Context* context) {
  std::string out;
  if (context) out += detail::context_summary(*context) + "\n\n";
  out += table_header();
  for (const auto& r : records) out += table_row(r);
  return out + table_footer(records);
}

}  // namespace trainbench
