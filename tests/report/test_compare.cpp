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

// bert trained on LibTorch 1.13 (attention=math, its only kernel) pairs with the same bert on 2.x
// (attention=sdpa, its default): the kernel is how, not what, is computed. A file that holds both
// kernels keeps them apart.
TEST(Compare, AttentionKernelsPairAcrossBuildsUnlessAFileHoldsBoth) {
  auto bert = [](const std::string& kernel, double throughput) {
    Record r;
    r.model = "bert";
    r.params = {{"layers", "2"}, {"attention", kernel}};
    r.batch_size = 8;
    r.device = "cpu";
    r.precision = "fp32";
    r.layout = "nchw";
    r.optimizer = "adamw";
    r.threads = 2;
    r.status = Status::ok;
    r.throughput = throughput;
    r.step_time_s.median = 8.0 / throughput;
    r.step_time_s.n = 6;
    return r;
  };
  ResultsFile old_build, new_build;
  old_build.context = new_build.context = read_results(kBase).context;
  old_build.benchmarks = {bert("math", 10.0)};
  new_build.benchmarks = {bert("sdpa", 12.0)};
  const Comparison c = compare_runs(old_build, new_build, "1.13", "2.11");
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_DOUBLE_EQ(*c.cases[0].ratio, 1.2);
  new_build.benchmarks.push_back(bert("math", 11.0));
  const Comparison both = compare_runs(old_build, new_build, "1.13", "2.11");
  ASSERT_EQ(both.cases.size(), 1u) << "math meets math only";
  EXPECT_DOUBLE_EQ(*both.cases[0].ratio, 1.1);
  EXPECT_EQ(both.only_in_other.size(), 1u);
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

// ---- memory: the records' `memory` objects, side by side ----

constexpr int64_t kGiB = int64_t{1} << 30;

// An ok resnet50 b32 record (the fixture's noise), with a `memory` object when `peak_bytes` > 0.
Record memory_record(const std::string& precision, int64_t peak_bytes, int64_t footprint_bytes,
                     const std::vector<std::pair<int64_t, int64_t>>& predictions = {}) {
  Record r;
  r.name = "resnet50:b32:" + precision + ":nchw:cpu";
  r.model = "resnet50";
  r.batch_size = 32;
  r.device = "cpu";
  r.precision = precision;
  r.layout = "nchw";
  r.optimizer = "sgd";
  r.threads = 8;
  r.status = Status::ok;
  r.throughput = 100;
  r.step_time_s.median = 0.32;
  r.step_time_s.jitter = 0.0032;
  r.step_time_s.n = 6;
  if (peak_bytes > 0) {
    MemoryInfo m;
    m.source = "counting allocator";
    m.peak_bytes = peak_bytes;
    m.footprint_peak_bytes = footprint_bytes;
    for (const auto& [size, batch] : predictions) m.predictions.push_back({size, batch, std::nullopt, 0});
    r.memory = m;
  }
  return r;
}

ResultsFile file_of(const Record& r) {
  ResultsFile f;
  f.context = read_results(kBase).context;
  f.benchmarks = {r};
  return f;
}

std::string csv_row_of(const std::string& csv, int line) {
  std::istringstream in(csv);
  std::string s;
  for (int i = 0; i <= line; ++i) std::getline(in, s);
  return s;
}

TEST(CompareMemory, PeaksAndTheirRatio) {
  // BASE peaks at 3 GiB of tensors, OTHER at 1.5 GiB: OTHER/BASE = 1.5 / 3 = 0.5, smaller. Footprints
  // 4 GiB and 5 GiB: 5 / 4 = 1.25, larger.
  const Comparison c = compare_runs(file_of(memory_record("fp32", 3 * kGiB, 4 * kGiB)),
                                    file_of(memory_record("fp32", 3 * kGiB / 2, 5 * kGiB)), "base", "other");
  ASSERT_EQ(c.cases.size(), 1u);
  ASSERT_TRUE(c.cases[0].memory);
  const MemoryComparison& m = *c.cases[0].memory;
  EXPECT_EQ(m.base_peak_bytes, 3221225472);   // 3 x 2^30
  EXPECT_EQ(m.other_peak_bytes, 1610612736);  // 1.5 x 2^30
  ASSERT_TRUE(m.peak_ratio);
  EXPECT_DOUBLE_EQ(*m.peak_ratio, 0.5);
  EXPECT_EQ(m.peak_change, SizeChange::smaller);
  ASSERT_TRUE(m.footprint_ratio);
  EXPECT_DOUBLE_EQ(*m.footprint_ratio, 1.25);
  EXPECT_EQ(m.footprint_change, SizeChange::larger);
  EXPECT_TRUE(m.predictions.empty());  // not `memory` runs

  const std::string table = print_comparisons_table({c});
  EXPECT_NE(table.find("memory (exact bytes"), std::string::npos) << table;
  EXPECT_EQ(table.find("predicted largest batch"), std::string::npos) << table;
  const std::string md = print_comparisons_markdown({c});
  EXPECT_NE(
      md.find("| resnet50:b32:fp32:nchw | 3.00 GiB | 1.50 GiB | 0.500 smaller | 4.00 GiB | 5.00 GiB | 1.25 larger |"),
      std::string::npos)
      << md;

  // CSV: the existing columns first and in their order, the memory ones appended.
  const std::string csv = print_comparisons_csv({c});
  const std::string old_header =
      "base_file,other_file,case,family,base_name,other_name,base_status,other_status,base_throughput,"
      "other_throughput,unit,ratio,noise,verdict,note,";
  EXPECT_EQ(csv_row_of(csv, 0).rfind(old_header, 0), 0u) << csv;
  EXPECT_NE(csv_row_of(csv, 0).find(",base_peak_bytes,other_peak_bytes,peak_ratio,peak_change,base_footprint_peak_"
                                    "bytes,other_footprint_peak_bytes,footprint_ratio,footprint_change,predicted_"
                                    "largest_batch"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv_row_of(csv, 1).find(",3221225472,1610612736,0.5,smaller,4294967296,5368709120,1.25,larger,"),
            std::string::npos)
      << csv;

  const auto j = nlohmann::json::parse(print_comparisons_json({c}))["comparisons"][0]["cases"][0]["memory"];
  EXPECT_EQ(j["peak_bytes"]["base"], 3221225472);
  EXPECT_EQ(j["peak_bytes"]["other"], 1610612736);
  EXPECT_DOUBLE_EQ(j["peak_bytes"]["ratio"].get<double>(), 0.5);
  EXPECT_EQ(j["peak_bytes"]["change"], "smaller");
  EXPECT_EQ(j["footprint_peak_bytes"]["other"], 5368709120);
  EXPECT_DOUBLE_EQ(j["footprint_peak_bytes"]["ratio"].get<double>(), 1.25);
  EXPECT_TRUE(j["predictions"].empty());
}

TEST(CompareMemory, ExactBytesHaveNoNoise) {
  EXPECT_EQ(size_change(1000, 999), SizeChange::smaller);  // one byte counts: allocator counts are exact
  EXPECT_EQ(size_change(1000, 1001), SizeChange::larger);
  EXPECT_EQ(size_change(1000, 1000), SizeChange::same);
  // A footprint not read on one side (0) is not compared; the peaks still are.
  const auto m = compare_memory(memory_record("fp32", 2 * kGiB, 0), memory_record("fp32", 2 * kGiB, 3 * kGiB));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->peak_change, SizeChange::same);
  EXPECT_DOUBLE_EQ(*m->peak_ratio, 1.0);
  EXPECT_FALSE(m->footprint_ratio);
  EXPECT_FALSE(m->base_footprint_bytes);
  const Comparison c = compare_runs(file_of(memory_record("fp32", 2 * kGiB, 0)),
                                    file_of(memory_record("fp32", 2 * kGiB, 3 * kGiB)), "base", "other");
  const auto j = nlohmann::json::parse(print_comparisons_json({c}))["comparisons"][0]["cases"][0]["memory"];
  EXPECT_TRUE(j["footprint_peak_bytes"].is_null());
  EXPECT_NE(print_comparisons_markdown({c}).find("| 2.00 GiB | 2.00 GiB | 1.00 same | - | - | - |"), std::string::npos);
}

TEST(CompareMemory, PredictionsJoinedPerSize) {
  // BASE predicts 64 at 8 GiB and 130 at 16 GiB; OTHER 70 at 8 GiB only: 8 GiB is the one size both
  // predicted for.
  const Comparison c =
      compare_runs(file_of(memory_record("fp32", 3 * kGiB, 4 * kGiB, {{8 * kGiB, 64}, {16 * kGiB, 130}})),
                   file_of(memory_record("fp32", 3 * kGiB, 4 * kGiB, {{8 * kGiB, 70}})), "base", "other");
  ASSERT_TRUE(c.cases[0].memory);
  const auto& p = c.cases[0].memory->predictions;
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].size_bytes, 8 * kGiB);
  EXPECT_EQ(p[0].base_batch, 64);
  EXPECT_EQ(p[0].other_batch, 70);

  const std::string table = print_comparisons_table({c});
  const size_t at = table.find("predicted largest batch");
  ASSERT_NE(at, std::string::npos) << table;
  EXPECT_NE(table.find("8 GiB", at), std::string::npos) << table;
  EXPECT_EQ(table.find("16 GiB"), std::string::npos) << table;
  EXPECT_NE(print_comparisons_markdown({c}).find("| resnet50:b32:fp32:nchw | 8 GiB | 64 | 70 |"), std::string::npos);
  EXPECT_NE(csv_row_of(print_comparisons_csv({c}), 1).find(",8589934592:64:70"), std::string::npos);
  const auto j = nlohmann::json::parse(print_comparisons_json({c}))["comparisons"][0]["cases"][0]["memory"];
  ASSERT_EQ(j["predictions"].size(), 1u);
  EXPECT_EQ(j["predictions"][0]["size_bytes"], 8589934592);
  EXPECT_EQ(j["predictions"][0]["base_largest_batch"], 64);
  EXPECT_EQ(j["predictions"][0]["other_largest_batch"], 70);
}

TEST(CompareMemory, OneSideOnlyHasNoMemorySection) {
  for (const bool base_has : {true, false}) {
    const Record with = memory_record("fp32", 3 * kGiB, 4 * kGiB), without = memory_record("fp32", 0, 0);
    const Comparison c =
        compare_runs(file_of(base_has ? with : without), file_of(base_has ? without : with), "base", "other");
    ASSERT_EQ(c.cases.size(), 1u);
    EXPECT_FALSE(c.cases[0].memory);
    EXPECT_FALSE(c.has_memory());
    EXPECT_EQ(print_comparisons_table({c}).find("memory ("), std::string::npos);
    EXPECT_EQ(print_comparisons_markdown({c}).find("Memory ("), std::string::npos);
    const std::string row = csv_row_of(print_comparisons_csv({c}), 1);
    EXPECT_EQ(row.substr(row.size() - 9), ",,,,,,,,,") << row;  // the nine memory cells, empty
    EXPECT_TRUE(nlohmann::json::parse(print_comparisons_json({c}))["comparisons"][0]["cases"][0]["memory"].is_null());
  }
  // An out-of-memory side measured no step to compare, even if it carried a `memory` object.
  Record oom = memory_record("fp32", 3 * kGiB, 4 * kGiB);
  oom.status = Status::oom;
  EXPECT_FALSE(compare_memory(memory_record("fp32", kGiB, kGiB), oom));
  // Files without `memory` (the fixtures) print no memory section.
  EXPECT_EQ(print_comparisons_table({fixture_comparison()}).find("memory ("), std::string::npos);
}

TEST(CompareMemoryCli, IgnoredPrecisionComparesMemoryFromFiles) {
  // fp32 against bf16 of the same case, read back from results files.
  const fs::path dir = temp_dir("compare", "memory");
  std::ofstream(dir / "fp32.json") << results_to_string(file_of(memory_record("fp32", 3 * kGiB, 4 * kGiB)));
  std::ofstream(dir / "bf16.json") << results_to_string(file_of(memory_record("bf16", 3 * kGiB / 2, 2 * kGiB)));
  const std::string files = (dir / "fp32.json").string() + " " + (dir / "bf16.json").string();
  CmdResult r = run_trainbench("compare " + files + " --ignore precision", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t at = r.out.find("memory (exact bytes");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("resnet50:b32:*:nchw", at), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3.00 GiB", at), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1.50 GiB", at), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0.500 smaller", at), std::string::npos) << r.out;
  r = run_trainbench("compare " + files + " --ignore precision --format json", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out)["comparisons"][0]["cases"][0]["memory"];
  EXPECT_DOUBLE_EQ(j["footprint_peak_bytes"]["ratio"].get<double>(), 0.5);  // 2 GiB / 4 GiB
}

}  // namespace
}  // namespace trainbench
