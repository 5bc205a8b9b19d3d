// Reporters (results/reporter.h): what each format prints at begin, at each record and at the end, and
// the registry --format looks names up in.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/compare.h"
#include "results/printer.h"
#include "results/printer_utilization.h"
#include "results/reporter.h"
#include "results/results_file.h"
#include "cli_util.h"

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
  const std::map<std::string, std::string> expected = {{"md", print_markdown(f.benchmarks, &f.context)},
                                                       {"csv", print_csv(f.benchmarks)},
                                                       {"json", results_to_string(f)}};
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

// ---------------------------------------------------------------- JSON lines

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out.push_back(nlohmann::json::parse(line));
    EXPECT_EQ(line, out.back().dump()) << "each line is compact JSON";
  }
  return out;
}

TEST(Jsonl, ContextLineThenTheResultsFilesRecordsOnePerLine) {
  const ResultsFile f = read_results(kFixture);
  // The reference is the json format, i.e. the results file as written.
  const auto file = nlohmann::json::parse(print_records("json", f));
  const auto lines = json_lines(print_records("jsonl", f));
  ASSERT_EQ(lines.size(), 1 + f.benchmarks.size());
  EXPECT_EQ(lines[0], nlohmann::json({{"context", file["context"]}, {"schema_version", file["schema_version"]}}));
  for (size_t i = 0; i < f.benchmarks.size(); ++i) EXPECT_EQ(lines[1 + i], file["benchmarks"][i]) << i;
}

TEST(Jsonl, StreamsEachRecordAsItArrivesAndNothingAtTheEnd) {
  const ResultsFile f = read_results(kFixture);
  std::ostringstream out;
  const auto jsonl = find_reporter("jsonl").make(out);
  jsonl->begin(f.context, Feed::live);
  EXPECT_EQ(json_lines(out.str()).size(), 1u) << "the context at once";
  jsonl->record(f.benchmarks[1]);
  const auto lines = json_lines(out.str());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(record_from_json(lines[1]).name, f.benchmarks[1].name);
  const std::string before_end = out.str();
  jsonl->end(f);
  EXPECT_EQ(out.str(), before_end);
}

// A real run of one tiny case: stdout, parsed line by line, is the context and the record of the
// results file the same run wrote.
TEST(Jsonl, RunStreamsTheContextAndEachRecordOfTheRun) {
  const auto dir = test::temp_dir("reporters", "jsonl");
  const std::string out = (dir / "r.json").string();
  const auto r = test::run_trainbench(
      "run --model convnet --set channels=4 --set depth=1 --set image=8 --batch 2 "
      "--threads 1 --warmup 1 --min-steps 2 --min-time 0 --max-noise 100 -f jsonl -o " +
          out,
      dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto file = nlohmann::json::parse(test::slurp(out));
  ASSERT_EQ(file["benchmarks"].size(), 1u);
  const auto lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0]["context"], file["context"]);
  EXPECT_EQ(lines[0]["schema_version"], file["schema_version"]);
  EXPECT_EQ(lines[1], file["benchmarks"][0]);
  const Record rec = record_from_json(lines[1]);
  EXPECT_EQ(rec.status, Status::ok) << rec.error;
  EXPECT_EQ(rec.batch_size, 2);
  EXPECT_EQ(rec.model, "convnet");
}

}  // namespace
}  // namespace trainbench
