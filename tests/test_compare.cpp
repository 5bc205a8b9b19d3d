// compare: the join, the ratio, the noise-aware verdict and the geometric means, on fixture files;
// and the command line's exit code 2 with one line for every kind of bad results file.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "report/compare.h"
#include "results/results_file.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

const std::string kData = TRAINBENCH_TEST_DATA;
const std::string kBase = kData + "/compare_base.json";
const std::string kOther = kData + "/compare_other.json";

using namespace test;

const CaseComparison& find_case(const Comparison& c, const std::string& model) {
  for (const auto& cc : c.cases)
    if (cc.base.model == model) return cc;
  throw std::runtime_error("no joined case for " + model);
}

Comparison fixture_comparison() { return compare_runs(read_results(kBase), read_results(kOther), "base", "other"); }

TEST(Compare, JoinsByDescriptorWithoutDevice) {
  const Comparison c = fixture_comparison();
  ASSERT_EQ(c.cases.size(), 7u);  // cpu in BASE, cuda:0 in OTHER: still joined
  EXPECT_EQ(c.cases[0].key, "resnet50:b32:fp32:nchw");
  EXPECT_EQ(c.cases[0].base.device, "cpu");
  EXPECT_EQ(c.cases[0].other.device, "cuda:0");
  EXPECT_EQ(find_case(c, "convnet").key, "convnet:variant=separable:b64:fp32:nchw");
  ASSERT_EQ(c.only_in_base.size(), 1u);
  EXPECT_EQ(c.only_in_base[0].model, "alexnet");
  ASSERT_EQ(c.only_in_other.size(), 1u);
  EXPECT_EQ(c.only_in_other[0].model, "googlenet");
}

TEST(Compare, IgnoredSettingsLetDifferentLayoutsJoin) {
  ResultsFile base = read_results(kBase);
  ResultsFile other = read_results(kOther);
  for (auto& r : other.benchmarks) r.layout = "nhwc";  // the same cases, run channels-last
  EXPECT_TRUE(compare_runs(base, other, "base", "other").cases.empty());
  ignore_field(base, "layout");
  ignore_field(other, "layout");
  const Comparison c = compare_runs(base, other, "base", "other");
  ASSERT_EQ(c.cases.size(), 7u);
  EXPECT_EQ(c.cases[0].key, "resnet50:b32:fp32:*");
  EXPECT_THROW(ignore_field(base, "device"), std::invalid_argument);
}

TEST(Compare, RatioIsOtherOverBase) {
  const Comparison c = fixture_comparison();
  ASSERT_TRUE(find_case(c, "resnet50").ratio);
  EXPECT_DOUBLE_EQ(*find_case(c, "resnet50").ratio, 1.5);
  EXPECT_DOUBLE_EQ(*find_case(c, "mobilenet_v2").ratio, 0.9);
  EXPECT_DOUBLE_EQ(*find_case(c, "bert").ratio, 2.0);
}

TEST(Compare, VerdictIsSameInsideNoiseOnly) {
  const Comparison c = fixture_comparison();
  EXPECT_EQ(find_case(c, "resnet50").verdict, Verdict::faster);
  EXPECT_EQ(find_case(c, "mobilenet_v2").verdict, Verdict::slower);  // -10% with 1% noise each side
  EXPECT_EQ(find_case(c, "vgg16").verdict, Verdict::same);           // +4% with 5% noise each side
  EXPECT_EQ(find_case(c, "bilstm").verdict, Verdict::same);          // +0.5% with 1% noise each side
  EXPECT_EQ(find_case(c, "convnet").verdict, Verdict::faster);
  EXPECT_NEAR(find_case(c, "vgg16").noise, std::sqrt(2.0) * 0.05, 1e-9);
}

TEST(Compare, VerdictRuleAtTheEdges) {
  // Noise 1% on each side: the threshold is sqrt(2) % = 1.414%.
  EXPECT_EQ(verdict_for(1.014, 0.01, 0.01), Verdict::same);
  EXPECT_EQ(verdict_for(0.986, 0.01, 0.01), Verdict::same);
  EXPECT_EQ(verdict_for(1.015, 0.01, 0.01), Verdict::faster);
  EXPECT_EQ(verdict_for(0.985, 0.01, 0.01), Verdict::slower);
  EXPECT_EQ(verdict_for(1.0, 0.0, 0.0), Verdict::same);
  EXPECT_EQ(verdict_for(1.001, 0.0, 0.0), Verdict::faster);  // no measured noise: any difference counts
  EXPECT_EQ(verdict_for(NAN, 0.01, 0.01), Verdict::none);
}

TEST(Compare, OomHasNoRatio) {
  const Comparison c = fixture_comparison();
  const CaseComparison& cc = find_case(c, "resnet18");
  EXPECT_FALSE(cc.ratio);
  EXPECT_EQ(cc.verdict, Verdict::none);
  EXPECT_EQ(cc.note, "oom in OTHER");
}

TEST(Compare, GeometricMeansPerFamilyAndOverall) {
  const Comparison c = fixture_comparison();
  std::map<std::string, FamilyMean> m;
  for (const auto& f : c.means) m[f.family] = f;
  ASSERT_EQ(c.means.size(), 5u);
  EXPECT_EQ(c.means.back().family, "overall");
  EXPECT_NEAR(m["cnn"].geomean, std::cbrt(1.5 * 0.9 * 1.04), 1e-9);
  EXPECT_EQ(m["cnn"].count, 3);  // the oom case has no ratio
  EXPECT_NEAR(m["ablation"].geomean, 1.1, 1e-9);
  EXPECT_NEAR(m["lstm"].geomean, 1.005, 1e-9);
  EXPECT_NEAR(m["transformer"].geomean, 2.0, 1e-9);
  EXPECT_NEAR(m["overall"].geomean, std::pow(1.5 * 0.9 * 1.04 * 1.1 * 1.005 * 2.0, 1.0 / 6), 1e-9);
  EXPECT_EQ(m["overall"].count, 6);
  EXPECT_NEAR(geometric_mean({2.0, 8.0}), 4.0, 1e-12);
  EXPECT_TRUE(std::isnan(geometric_mean({})));
}

TEST(Compare, ThreadsLeftOutOfTheKeyUnlessSwept) {
  ResultsFile a = read_results(kBase), b = read_results(kOther);
  for (auto& r : b.benchmarks) r.threads = 1;
  EXPECT_EQ(compare_runs(a, b, "a", "b").cases.size(), 7u);  // 8 threads vs 1: still the same cases

  // A thread sweep in OTHER: each thread count is its own case, and only t8 meets BASE.
  ResultsFile swept = read_results(kOther);
  Record extra = swept.benchmarks[0];
  extra.threads = 4;
  extra.throughput = 60;
  swept.benchmarks.push_back(extra);
  const Comparison c = compare_runs(a, swept, "a", "b");
  EXPECT_TRUE(c.keys_with_threads);
  EXPECT_EQ(c.cases[0].key, "resnet50:b32:fp32:nchw:t8");
  EXPECT_DOUBLE_EQ(*c.cases[0].ratio, 1.5);
  EXPECT_EQ(c.only_in_other.size(), 2u);  // googlenet, resnet50 t4
}

TEST(CompareCli, PrintsEveryFormat) {
  const fs::path dir = temp_dir("compare", "formats");
  CmdResult r = run_trainbench("compare " + kBase + " " + kOther, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("faster"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("only in BASE (1): alexnet:b32:fp32:nchw"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("only in OTHER (1): googlenet:b32:fp32:nchw"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("overall"), std::string::npos) << r.out;

  r = run_trainbench("compare " + kBase + " " + kOther + " --format md", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("| case | family | base | other | unit | ratio | noise | verdict | note |"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| resnet50:b32:fp32:nchw | CNNs | 100 | 150 | images/s | 1.50 | ±1.4% | faster |  |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| resnet18:b256:fp32:nchw | CNNs | 80.0 | - | images/s | - | - | - | oom in OTHER |"),
            std::string::npos)
      << r.out;

  r = run_trainbench("compare " + kBase + " " + kOther + " --format csv", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 1 + 7 + 2);

  r = run_trainbench(
      "compare " + kBase + " " + kOther + " " + kOther + " --format json -o " + (dir / "c.json").string(), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(dir / "c.json"));
  ASSERT_EQ(j["comparisons"].size(), 2u);  // one per OTHER
  EXPECT_EQ(j["comparisons"][0]["cases"].size(), 7u);
  EXPECT_EQ(j["comparisons"][0]["cases"][0]["verdict"], "faster");
  EXPECT_TRUE(j["comparisons"][0]["cases"][6]["ratio"].is_null());
  EXPECT_NEAR(j["comparisons"][0]["geomean"]["transformer"]["ratio"].get<double>(), 2.0, 1e-9);
}

// Every kind of bad results file: exit 2 and one line naming the file.
void expect_bad_file(const std::string& subcommand, const std::string& content, bool create, const std::string& what) {
  const fs::path dir = temp_dir("compare", "bad");
  const fs::path bad = dir / "bad_results.json";
  if (create) std::ofstream(bad) << content;
  const std::string args = subcommand == "compare"
                               ? "compare " + kBase + " " + bad.string()
                               : "report " + kBase + " " + bad.string() + " -o " + (dir / "r.html").string();
  const CmdResult r = run_trainbench(args, dir);
  EXPECT_TRUE(refused(r, {bad.string()})) << what;
  EXPECT_TRUE(r.out.empty()) << what;
  EXPECT_FALSE(fs::exists(dir / "r.html")) << what;
}

void expect_every_bad_file(const std::string& subcommand) {
  const std::string good = slurp(kBase);
  expect_bad_file(subcommand, "", false, "missing");
  expect_bad_file(subcommand, "", true, "empty");
  expect_bad_file(subcommand, good.substr(0, good.size() / 2), true, "truncated");
  expect_bad_file(subcommand, R"({"name": "a package", "version": "1.0"})", true, "foreign JSON");
  expect_bad_file(subcommand, "this is not json at all\n", true, "not JSON");
  auto j = nlohmann::json::parse(good);
  j["schema_version"] = 7;
  expect_bad_file(subcommand, j.dump(), true, "schema_version 7");
}

TEST(CompareCli, BadFilesGiveOneLineAndExitTwo) { expect_every_bad_file("compare"); }
TEST(ReportCli, BadFilesGiveOneLineAndExitTwo) { expect_every_bad_file("report"); }

TEST(CompareCli, NeedsTwoFilesAndAKnownFormat) {
  const fs::path dir = temp_dir("compare", "usage");
  CmdResult r = run_trainbench("compare " + kBase, dir);
  EXPECT_TRUE(refused(r, {}));
  r = run_trainbench("compare " + kBase + " " + kOther + " --format xml", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("xml"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trainbench
