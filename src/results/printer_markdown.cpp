// A GitHub-flavoured markdown table with the console table's columns, for pasting into issues and docs.
#include "results/printer.h"

#include <algorithm>

#include "results/text_table.h"

namespace trainbench {

std::string markdown_escape(const std::string& s) {
  std::string out;
  std::string flat = s;
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  std::replace(flat.begin(), flat.end(), '\r', ' ');
  for (char c : terminal_text(flat)) {  // the other controls as \xNN; then what Markdown and HTML read
    if (c == '|')
      out += "\\|";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '`')
      out += "\\`";
    else
      out += c;
  }
  return out;
}

std::string print_markdown(const std::vector<Record>& records, const Context* context) {
  std::string out;
  if (context) out += markdown_escape(detail::context_summary(*context)) + "\n\n";
  out += markdown_header(detail::table_columns());
  for (const auto& r : records) out += markdown_line(detail::table_cells(r));
  const std::string footer = table_footer(records);
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
