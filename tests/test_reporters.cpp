// Reporters (results/reporter.h): what each format prints at begin, at each record and at the end, and
// the registry --format looks names up in.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "report/compare.h"
#include "results/printer.h"
#include "results/printer_utilization.h"
#include "results/reporter.h"
#include "results/results_file.h"

namespace trainbench {
namespace {

const std::string kFixture = std::string(TRAINBENCH_TEST_DATA) + "/results_v1.json";

TEST(Reporter, LiveTableIsTheHeaderThenARowAsEachCaseEndsThenTheFooters) {
  const ResultsFile f = read_results(kFixture);
  std::ostringstream out;
  const auto table = find_reporter("table").make(out);
  // A sweep's table has no machine line: the header comes at once, so the rows line up as they arrive.
  table->begin(f.context, Feed::live);
  EXPECT_EQ(out.str(), table_header());
  table->record(f.benchmarks[0]);
  EXPECT_EQ(out.str(), table_header() + table_row(f.benchmarks[0]));
  // The footers are about every record of the file (those measured before a --resume too).
  table->end(f);
  EXPECT_EQ(out.str(), table_header() + table_row(f.benchmarks[0]) + noise_footer(f.benchmarks) +
                           data_footer(f.benchmarks) + utilization_footer(f.benchmarks));
}

TEST(Reporter, TableOfAWholeFileIsPrintTable) {
  const ResultsFile f = read_results(kFixture);
  EXPECT_EQ(print_records("table", f), print_table(f.benchmarks, &f.context));
}

TEST(Reporter, WholeFileFormatsPrintNothingUntilTheEnd) {
  const ResultsFile f = read_results(kFixture);
  const std::map<std::string, std::string> expected = {
      {"md", print_markdown(f.benchmarks, &f.context)}, {"csv", print_csv(f.benchmarks)}, {"json", results_to_string(f)}};
  for (const auto& [name, text] : expected) {
    std::ostringstream out;
    const auto reporter = find_reporter(name).make(out);
    reporter->begin(f.context, Feed::live);
    for (const auto& r : f.benchmarks) reporter->record(r);
    EXPECT_EQ(out.str(), "") << name;
    reporter->end(f);
    EXPECT_EQ(out.str(), text) << name;
  }
}

TEST(Reporter, RegistryNamesAreUniqueAndAllInTheHelp) {
  std::set<std::string> names;
  const std::string help = reporters_help();
  for (const auto& r : reporters()) {
    for (const auto& name : r.aliases) EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_NE(help.find(r.name + " ("), std::string::npos) << help;
    EXPECT_FALSE(r.help.empty()) << r.name;
    EXPECT_EQ(r.console, r.name == "table") << "only the console table may share stdout with run's notes";
  }
  EXPECT_EQ(find_reporter("markdown").name, "md");
}

TEST(Reporter, UnknownFormatMessageListsTheNames) {
  EXPECT_EQ(unknown_format_message("xml", {"a"}), "unknown output format \"xml\" (expected a)");
  EXPECT_EQ(unknown_format_message("xml", {"a", "b"}), "unknown output format \"xml\" (expected a or b)");
  EXPECT_EQ(unknown_format_message("xml", {"a", "b", "c"}), "unknown output format \"xml\" (expected a, b or c)");
}

TEST(Reporter, CompareFormatsAreLookedUpByNameToo) {
  EXPECT_EQ(comparison_printer("table"), &print_comparisons_table);
  EXPECT_EQ(comparison_printer("md"), &print_comparisons_markdown);
  EXPECT_EQ(comparison_printer("markdown"), &print_comparisons_markdown);
  EXPECT_EQ(comparison_printer("csv"), &print_comparisons_csv);
  EXPECT_EQ(comparison_printer("json"), &print_comparisons_json);
  try {
    comparison_printer("xml");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    // The message compare has always given.
    EXPECT_STREQ(e.what(), "unknown output format \"xml\" (expected table, md, csv or json)");
  }
}

}  // namespace
}  // namespace trainbench
