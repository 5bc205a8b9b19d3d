// The text table helper (results/text_table.h) that the run table, compare and list print through, and
// the shared round-trip number format of the CSV printers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "results/number_format.h"
#include "results/text_table.h"

namespace trainbench {
namespace {

TEST(TextTable, PadsToFixedWidthsAndLeavesALeftLastCellAlone) {
  const TextTable t({{"a", 3}, {"b", 4, true}, {"c"}});
  // "x" padded to 3, a gap of 2, "y" right-aligned in 4, a gap of 2, "z" as it is.
  EXPECT_EQ(t.line({"x", "y", "z"}), std::string("x  ") + "  " + "   y" + "  " + "z\n");
  // A longer cell is never cut: it pushes the rest of its line right.
  EXPECT_EQ(t.line({"long", "y", "z"}), std::string("long") + "  " + "   y" + "  " + "z\n");
  EXPECT_EQ(t.header(), std::string("a  ") + "  " + "   b" + "  " + "c\n");
  // Dashes as wide as the column, or its title when that is wider.
  EXPECT_EQ(t.rule(), std::string("---") + "  " + "----" + "  " + "-\n");
  // Widths count code points, not bytes: "±" is one terminal column.
  EXPECT_EQ(display_width("±jitter"), 7u);
  EXPECT_EQ(t.line({"±", "y", "z"}), std::string("±  ") + "  " + "   y" + "  " + "z\n");
}

TEST(TextTable, MatchesPrintfStylePaddingWithOneSpaceGaps) {
  // `list` printed with fmt's "{:<6} {:>5}  {}" before it used the table: the same columns must give the
  // same bytes, fmt's padding being the reference.
  const TextTable t({{"name", 6}, {"n", 5, true, 1}, {"what", 0, false, 2}});
  const std::vector<std::vector<std::string>> rows = {
      {"ab", "7", "text"}, {"toolongname", "123456", ""}, {"", "", "x y"}};
  for (const auto& r : rows) EXPECT_EQ(t.line(r), fmt::format("{:<6} {:>5}  {}\n", r[0], r[1], r[2]));
}

TEST(TextTable, FittedTableWidensToItsCellsAndTrimsTrailingSpaces) {
  const std::vector<std::vector<std::string>> rows = {{"resnet50", "1.50", ""}, {"vgg", "10.25", "oom"}};
  const std::string out = fitted_table({{"case"}, {"ratio", 0, true}, {"note"}}, rows);
  // Widths: case 8 ("resnet50"), ratio 5 ("ratio", "10.25"), note 4; the empty last cell leaves no spaces.
  EXPECT_EQ(out,
            "case      ratio  note\n"
            "--------  -----  ----\n"
            "resnet50   1.50\n"
            "vgg       10.25  oom\n");
}

TEST(TextTable, MarkdownCarriesAlignmentAndEscapesCells) {
  EXPECT_EQ(markdown_header({{"model"}, {"batch", 5, true}}), "| model | batch |\n| --- | ---: |\n");
  EXPECT_EQ(markdown_line({"a|b", "two\nlines"}), "| a\\|b | two lines |\n");
}

TEST(NumberFormat, RoundTripHasEveryDigitAndEmptyForNonFinite) {
  for (double x : {0.1, 1.0 / 3.0, 2.5e-9, 123456789.125, 1e300}) {
    const std::string s = format_round_trip(x);
    EXPECT_EQ(std::stod(s), x) << s;  // reads back to the same double
  }
  EXPECT_EQ(format_round_trip(0.1), "0.1");  // and no more digits than that needs
  EXPECT_EQ(format_round_trip(std::nan("")), "");
  EXPECT_EQ(format_round_trip(std::numeric_limits<double>::infinity()), "");
}

}  // namespace
}  // namespace trainbench
