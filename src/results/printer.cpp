// Output format names and the dispatch from a format to its printer.
#include "results/printer.h"

#include <stdexcept>

namespace trainbench {

Format format_from_string(const std::string& s) {
  if (s == "table") return Format::table;
  if (s == "md" || s == "markdown") return Format::md;
  if (s == "csv") return Format::csv;
  if (s == "json") return Format::json;
  throw std::invalid_argument("unknown output format \"" + s + "\" (expected table, md, csv or json)");
}

const char* to_string(Format f) {
  switch (f) {
    case Format::table: return "table";
    case Format::md: return "md";
    case Format::csv: return "csv";
    case Format::json: return "json";
  }
  return "table";
}

std::string print_records(Format format, const ResultsFile& file) {
  switch (format) {
    case Format::table: return print_table(file.benchmarks, &file.context);
    case Format::md: return print_markdown(file.benchmarks, &file.context);
    case Format::csv: return print_csv(file.benchmarks);
    case Format::json: return print_json(file);
  }
  return print_table(file.benchmarks, &file.context);
}

}  // namespace trainbench
