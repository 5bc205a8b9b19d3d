// The console table: fixed-width columns, so rows printed live as cases end line up with the header.
#include "results/printer.h"
#include "results/printer_utilization.h"

namespace trainbench {

namespace {

std::string pad(const std::string& s, int width, bool right) {
  const size_t w = detail::display_width(s);
  if (width <= 0 || w >= static_cast<size_t>(width)) return s;
  const std::string fill(static_cast<size_t>(width) - w, ' ');
  return right ? fill + s : s + fill;
}

std::string join_line(const std::vector<std::string>& cells) {
  const auto& columns = detail::table_columns();
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    const bool last = i + 1 == cells.size();
    line += last ? cells[i] : pad(cells[i], columns[i].width, columns[i].right_align) + "  ";
  }
  return line + "\n";
}

}  // namespace

std::string table_header() {
  std::vector<std::string> titles, rules;
  for (const auto& c : detail::table_columns()) {
    titles.emplace_back(c.title);
    const size_t w = std::max(detail::display_width(c.title), static_cast<size_t>(c.width));
    rules.emplace_back(w, '-');
  }
  return join_line(titles) + join_line(rules);
}

std::string table_row(const Record& r) { return join_line(detail::table_cells(r)); }

std::string print_table(const std::vector<Record>& records, const Context* context) {
  std::string out;
  if (context) out += detail::context_summary(*context) + "\n\n";
  out += table_header();
  for (const auto& r : records) out += table_row(r);
  return out + noise_footer(records) + data_footer(records) + utilization_footer(records);
}

}  // namespace trainbench
