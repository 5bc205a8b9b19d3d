// A GitHub-flavoured markdown table with the console table's columns, for pasting into issues and docs.
#include "results/printer.h"
#include "results/printer_utilization.h"

namespace trainbench {

std::string markdown_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

namespace {

std::string md_line(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& c : cells) line += " " + markdown_escape(c) + " |";
  return line + "\n";
}

}  // namespace

std::string print_markdown(const std::vector<Record>& records, const Context* context) {
  std::string out;
  if (context) out += markdown_escape(detail::context_summary(*context)) + "\n\n";
  std::vector<std::string> titles;
  std::string separator = "|";
  for (const auto& c : detail::table_columns()) {
    titles.emplace_back(c.title);
    separator += c.right_align ? " ---: |" : " --- |";
  }
  out += md_line(titles) + separator + "\n";
  for (const auto& r : records) out += md_line(detail::table_cells(r));
  const std::string footer = noise_footer(records) + data_footer(records) + utilization_footer(records);
  // Each footer line its own paragraph (an escape would join them into one).
  size_t at = 0;
  while (at < footer.size()) {
    const size_t end = footer.find('\n', at);
    out += "\n" + markdown_escape(footer.substr(at, end - at)) + "\n";
    at = end == std::string::npos ? footer.size() : end + 1;
  }
  return out;
}

}  // namespace trainbench
