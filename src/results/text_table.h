// Tables of text for people: columns with a title, a width and an alignment, printed as console lines
// padded to the widths, or as GitHub markdown. The run table, compare's tables and `list` all print
// through these, so a column lines up the same way everywhere.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace trainbench {

struct TextColumn {
  std::string title;
  size_t width = 0;  // terminal columns; a minimum: a longer cell pushes the rest of its line right
  bool right_align = false;
  size_t gap = 2;  // spaces before the column (none before the first)
};

class TextTable {
 public:
  // `trim_right`: lines lose their trailing spaces (a table whose last cells may be empty).
  explicit TextTable(std::vector<TextColumn> columns, bool trim_right = false);

  // Widens the columns to the titles and to every cell of `rows`: for a table printed whole. A table
  // printed a line at a time (as cases end) keeps its fixed widths instead.
  void fit(const std::vector<std::vector<std::string>>& rows);

  // One line ending in '\n'. Each cell is padded to its column's width, except a left-aligned last
  // cell, which has nothing after it to line up.
  std::string line(const std::vector<std::string>& cells) const;
  std::string header() const;  // the titles, as a line
  std::string rule() const;    // dashes under each title, as wide as its column (or its title)

  const std::vector<TextColumn>& columns() const { return columns_; }

 private:
  std::vector<TextColumn> columns_;
  bool trim_right_;
};

// A whole table fitted to its rows, trailing spaces trimmed: header, rule, then the rows.
std::string fitted_table(std::vector<TextColumn> columns, const std::vector<std::vector<std::string>>& rows);

// GitHub markdown: "| a | b |\n" with each cell escaped (printer.h's markdown_escape); the header is
// the titles' line and the separator line "| --- | ---: |\n" that carries the columns' alignment.
std::string markdown_line(const std::vector<std::string>& cells);
std::string markdown_header(const std::vector<TextColumn>& columns);

// Length in terminal columns of UTF-8 text (code points; the tables use no wide characters).
size_t display_width(const std::string& s);
// Text from a record as a terminal shows it, the characters it is and nothing a terminal would obey:
// C0 and C1 controls (an escape sequence that retitles or clears a terminal) written as \xNN / \uNNNN,
// and cut after `longest` characters with "…". Every TextTable cell passes through it, cut at
// kLongestCell (a 1 MiB text pads no table).
constexpr size_t kLongestCell = 160;
std::string terminal_text(const std::string& s, size_t longest = static_cast<size_t>(-1));

}  // namespace trainbench
