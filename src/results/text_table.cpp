#include "results/text_table.h"

#include <algorithm>
#include <cstdio>

#include "results/printer.h"

namespace trainbench {

std::string terminal_text(const std::string& s, size_t longest) {
  std::string out;
  size_t shown = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (shown >= longest && (c & 0xC0) != 0x80) {
      out += "\u2026";  // …
      break;
    }
    char hex[8];
    if (c < 0x20 || c == 0x7f) {
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      shown += 4;
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      // A C1 control (U+0080..U+009F: CSI among them), which some terminals obey.
      std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned char>(s[++i]));
      out += hex;
      shown += 6;
    } else {
      out += s[i];
      if ((c & 0xC0) != 0x80) ++shown;
    }
  }
  return out;
}

size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

TextTable::TextTable(std::vector<TextColumn> columns, bool trim_right)
    : columns_(std::move(columns)), trim_right_(trim_right) {}

void TextTable::fit(const std::vector<std::vector<std::string>>& rows) {
  for (auto& c : columns_) c.width = std::max(c.width, display_width(c.title));
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < columns_.size(); ++i) {
      columns_[i].width = std::max(columns_[i].width, display_width(terminal_text(row[i], kLongestCell)));
    }
  }
}

std::string TextTable::line(const std::vector<std::string>& raw) const {
  std::vector<std::string> cells;
  for (const auto& c : raw) cells.push_back(terminal_text(c, kLongestCell));
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    const TextColumn none;
    const TextColumn& c = i < columns_.size() ? columns_[i] : none;
    if (i > 0) out.append(c.gap, ' ');
    const size_t w = display_width(cells[i]);
    const std::string fill(c.width > w ? c.width - w : 0, ' ');
    if (c.right_align) {
      out += fill + cells[i];
    } else {
      out += i + 1 < cells.size() ? cells[i] + fill : cells[i];
    }
  }
  if (trim_right_) {
    while (!out.empty() && out.back() == ' ') out.pop_back();
  }
  return out + "\n";
}

std::string TextTable::header() const {
  std::vector<std::string> titles;
  for (const auto& c : columns_) titles.push_back(c.title);
  return line(titles);
}

std::string TextTable::rule() const {
  std::vector<std::string> rules;
  for (const auto& c : columns_) rules.emplace_back(std::max(display_width(c.title), c.width), '-');
  return line(rules);
}

std::string fitted_table(std::vector<TextColumn> columns, const std::vector<std::vector<std::string>>& rows) {
  TextTable table(std::move(columns), true);
  table.fit(rows);
  std::string out = table.header() + table.rule();
  for (const auto& row : rows) out += table.line(row);
  return out;
}

std::string markdown_line(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& c : cells) line += " " + markdown_escape(c) + " |";
  return line + "\n";
}

std::string markdown_header(const std::vector<TextColumn>& columns) {
  std::vector<std::string> titles;
  std::string separator = "|";
  for (const auto& c : columns) {
    titles.push_back(c.title);
    separator += c.right_align ? " ---: |" : " --- |";
  }
  return markdown_line(titles) + separator + "\n";
}

}  // namespace trainbench
