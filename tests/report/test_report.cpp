// The HTML report: its data model, that it is self-contained, the Chart.js look-up, and a headless
// Chromium that opens the page, finds every chart drawn and no script error, and saves a screenshot.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "browser_util.h"
#include "cli_util.h"
#include "memory/fit.h"
#include "report/html_report.h"
#include "results/results_file.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

const std::string kData = TRAINBENCH_TEST_DATA;
const std::string kCpu = kData + "/report_cpu.json";
const std::string kGpu = kData + "/report_gpu.json";
const std::string kExplain = kData + "/explain_convnet.json";  // `trainbench explain` of a small convnet
const std::string kDist = kData + "/report_dist.json";         // `launch --nproc 2 -- run --model convnet ... --dist`

using namespace test;

std::vector<ReportRun> fixture_runs() { return {{"cpu.json", read_results(kCpu)}, {"gpu.json", read_results(kGpu)}}; }

TEST(Report, ModelHasSpeedupSweepAndAblation) {
  const auto m = report_model(fixture_runs());
  ASSERT_TRUE(m["speedup"].is_object());
  const auto labels = m["speedup"]["labels"].get<std::vector<std::string>>();
  EXPECT_EQ(labels, (std::vector<std::string>{"resnet18", "convnet", "bert"}));
  ASSERT_EQ(m["speedup"]["series"].size(), 1u);
  EXPECT_NEAR(m["speedup"]["series"][0]["data"][0].get<double>(), 3.0, 1e-9);  // every case 3x; b16 oom in BASE

  ASSERT_EQ(m["sweeps"].size(), 1u);  // only resnet18 ran at several batch sizes
  const auto& sw = m["sweeps"][0];
  EXPECT_EQ(sw["title"], "resnet18:fp32:nchw");
  EXPECT_EQ(sw["batches"].get<std::vector<int64_t>>(), (std::vector<int64_t>{2, 4, 8, 16}));
  ASSERT_EQ(sw["series"].size(), 2u);
  EXPECT_TRUE(sw["series"][0]["data"][3].is_null());  // oom: no point on the line...
  EXPECT_EQ(sw["series"][0]["oom"][3], 0);            // ...but a marker
  EXPECT_TRUE(sw["series"][1]["oom"][3].is_null());
  EXPECT_EQ(sw["oom"].size(), 1u);

  ASSERT_TRUE(m["ablation"].is_object());
  EXPECT_EQ(m["ablation"]["labels"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"conv", "separable", "depthwise"}));
  EXPECT_GT(m["ablation"]["series"][0]["gflops"][0].get<double>(), 0.0);
}

TEST(Report, ExplainFilesGetTheirBreakdown) {
  const ResultsFile f = read_results(kExplain);
  ASSERT_TRUE(f.explain);
  const auto m = report_model({{"explain.json", f}, {"cpu.json", read_results(kCpu)}});
  ASSERT_EQ(m["explain"].size(), 1u);  // only the explain file has one
  const auto& ex = m["explain"][0];
  const size_t layers = f.explain->layers.size();
  ASSERT_EQ(ex["labels"].size(), layers + 1);  // every layer and the unattributed rest
  EXPECT_EQ(ex["labels"][0], f.explain->layers[0].label + " ×" + std::to_string(f.explain->layers[0].count));
  EXPECT_NEAR(ex["fwd"][0].get<double>(), 1e3 * f.explain->layers[0].count * f.explain->layers[0].fwd_s, 1e-9);
  EXPECT_TRUE(ex["other"][0].is_null());
  EXPECT_NEAR(ex["other"][layers].get<double>(), 1e3 * f.explain->other_time_s, 1e-9);
  EXPECT_EQ(ex["findings"].size(), f.explain->findings.size());
}

TEST(Report, OneRunHasNoSpeedupChart) {
  const auto m = report_model({{"cpu.json", read_results(kCpu)}});
  EXPECT_TRUE(m["speedup"].is_null());
  EXPECT_EQ(m["sweeps"].size(), 1u);
}

// A single run opens with throughput per model: one chart per unit, OOM and error cases marked where
// their bar is missing, and cases whose noise missed the target marked (Record::noise_target_met).
TEST(Report, OneRunHasThroughputBarsWithOomAndNoiseMarks) {
  ResultsFile f = read_results(kCpu);
  f.benchmarks[0].status = Status::oom;
  f.benchmarks[1].noise_target_met = false;
  const auto m = report_model({{"cpu.json", f}});
  ASSERT_TRUE(m["throughput"].is_array());
  ASSERT_EQ(m["throughput"].size(), 2u);  // images/s and sequences/s
  std::string marks;
  for (const auto& chart : m["throughput"]) {
    for (const auto& ser : chart["series"]) {
      for (size_t i = 0; i < ser["data"].size(); ++i) {
        if (!ser["marks"][i].is_null()) marks += ser["marks"][i].get<std::string>() + ";";
        if (ser["marks"][i] == "OOM") {
          EXPECT_TRUE(ser["data"][i].is_null());
        }
      }
    }
  }
  EXPECT_NE(marks.find("OOM;"), std::string::npos) << marks;
  EXPECT_NE(marks.find("noisy;"), std::string::npos) << marks;
  // Two runs compare instead: no throughput bars.
  EXPECT_TRUE(report_model(fixture_runs())["throughput"].is_null());
}

// A file of predictions (`trainbench predict -o`): a bar per card, each its own category, marked as
// predicted; nothing of it enters a measured chart.
TEST(Report, PredictionsAreBarsOfTheirOwnMarkedAsPredicted) {
  ResultsFile f = read_results(kCpu);
  Record r = f.benchmarks.at(0);
  r.device = "cuda";
  r.status = Status::predicted;
  r.throughput = 500.0;
  PredictionInfo p;
  p.method = "spec-sheet";
  p.device_id = "t4";
  r.prediction = p;
  Record h = r;
  h.throughput = 2000.0;
  h.prediction->device_id = "h100-sxm";
  f.benchmarks = {r, h};
  const auto m = report_model({{"predicted.json", f}});
  ASSERT_TRUE(m["throughput"].is_array());
  const auto& chart = m["throughput"].at(0);
  const auto labels = chart["labels"].get<std::vector<std::string>>();
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_NE(labels[0].find("on t4 (predicted)"), std::string::npos) << labels[0];
  EXPECT_NE(labels[1].find("on h100-sxm (predicted)"), std::string::npos) << labels[1];
  EXPECT_DOUBLE_EQ(chart["series"][0]["data"][1].get<double>(), 2000.0);
  EXPECT_EQ(chart["series"][0]["marks"][0], "predicted");
  EXPECT_TRUE(m["sweeps"].empty());
}

TEST(Report, DataParallelRunsHaveAThroughputAgainstWorldSizeChart) {
  EXPECT_TRUE(report_model(fixture_runs())["scaling"].is_null());  // no record ran on more than one rank
  const ResultsFile f = read_results(kDist);
  ASSERT_EQ(f.context.world_size, 2);
  const Record& r = f.benchmarks.at(0);
  ASSERT_TRUE(r.dist.has_value());
  const auto m = report_model({{"dist.json", f}});
  ASSERT_EQ(m["scaling"].size(), 1u);
  const auto& sc = m["scaling"][0];
  EXPECT_EQ(sc["worlds"].get<std::vector<int>>(), (std::vector<int>{1, 2}));
  EXPECT_NEAR(sc["throughput"][0].get<double>(), r.dist->single_process_throughput, 1e-9);
  EXPECT_NEAR(sc["throughput"][1].get<double>(), r.throughput, 1e-9);
  EXPECT_NEAR(sc["ideal"][1].get<double>(), 2 * r.dist->single_process_throughput, 1e-9);
  EXPECT_NEAR(sc["efficiency"][1].get<double>(), r.dist->scaling_efficiency, 1e-9);
  EXPECT_NEAR(sc["efficiency"][0].get<double>(), 1.0, 1e-12);
}

TEST(Report, PageIsSelfContained) {
  const std::string page = html_report(fixture_runs(), "/* chart.js stand-in */ window.Chart = function () {};");
  EXPECT_NE(page.find("chart.js stand-in"), std::string::npos);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_NE(page.find("resnet18:b2:fp32:nchw:cpu"), std::string::npos);  // the rerun descriptor in the table
  EXPECT_NE(page.find("openblas"), std::string::npos);                   // the context
}

TEST(Report, ScriptTextCannotCloseItsTag) {
  const std::string page = detail::fill_report_template("t", R"({"a": "</script><b>"})", "", "var x = 1;");
  EXPECT_EQ(page.find("</script><b>"), std::string::npos);
  EXPECT_NE(page.find(R"(\u003c/script\u003e\u003cb\u003e)"), std::string::npos);
}

constexpr int64_t kMiB = int64_t{1} << 20;

// report_cpu.json with memory breakdowns as `trainbench memory` and `run` write them: resnet18 measured
// at batches 2, 4 and 8 for a fit (the record at 8 carries it, with predictions for 1 GiB and 2 GiB),
// bert b4 with a one-case breakdown. Round numbers of MiB so the expected chart data follow by hand.
ResultsFile with_memory() {
  ResultsFile f = read_results(kCpu);
  for (int i : {0, 1, 2}) {  // resnet18 b2, b4, b8
    MemoryInfo m;
    m.source = "counting allocator";
    m.parameters_bytes = 45 * kMiB;
    m.gradients_bytes = 45 * kMiB;
    m.activations_bytes_per_sample = 20.0 * kMiB;
    m.peak_bytes = (100 + 20 * f.benchmarks[i].batch_size) * kMiB;
    f.benchmarks[i].memory = m;
  }
  MemoryInfo& fitted = *f.benchmarks[2].memory;
  // Footprints 300, 340, 420 MiB at batches 2, 4, 8: the line 260 MiB + 20 MiB x batch.
  fitted.fit = memory::fit_memory({2, 4, 8}, {300 * kMiB, 340 * kMiB, 420 * kMiB}, "address space");
  for (int64_t size : {int64_t{1} << 30, int64_t{2} << 30})
    fitted.predictions.push_back(memory::predict(*fitted.fit, size));
  Record& bert = f.benchmarks.at(7);
  EXPECT_EQ(bert.model, "bert");
  MemoryInfo b;
  b.parameters_bytes = 40 * kMiB;
  b.gradients_bytes = 40 * kMiB;
  b.optimizer_bytes = 80 * kMiB;
  b.activations_bytes_per_sample = 5.0 * kMiB;
  b.peak_bytes = 190 * kMiB;
  bert.memory = b;
  return f;
}

TEST(Report, MemoryChartsOnlyForRecordsWithMemory) {
  // Files without memory (all older ones): no memory charts.
  const auto none = report_model(fixture_runs());
  EXPECT_TRUE(none["memory"].is_null());
  EXPECT_TRUE(none["memory_fits"].empty());

  const auto m = report_model({{"mem.json", with_memory()}});
  ASSERT_TRUE(m["memory"].is_object());
  const auto& mb = m["memory"];
  // The fitted record stands for resnet18's three measured batches; bert has its own bar.
  EXPECT_EQ(mb["labels"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"resnet18:b8:fp32:nchw:cpu", "bert:b4:fp32:nchw:cpu"}));
  // resnet18 b8: 45 + 45 + 0 + 20 x 8 = 250 MiB of the 260 MiB peak; 10 MiB other.
  EXPECT_DOUBLE_EQ(mb["parameters"][0].get<double>(), 45.0);
  EXPECT_DOUBLE_EQ(mb["gradients"][0].get<double>(), 45.0);
  EXPECT_DOUBLE_EQ(mb["optimizer"][0].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(mb["activations"][0].get<double>(), 160.0);
  EXPECT_DOUBLE_EQ(mb["other"][0].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(mb["peak"][0].get<double>(), 260.0);
  // bert b4: 40 + 40 + 80 + 5 x 4 = 180 MiB of 190 MiB.
  EXPECT_DOUBLE_EQ(mb["optimizer"][1].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(mb["activations"][1].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(mb["other"][1].get<double>(), 10.0);

  ASSERT_EQ(m["memory_fits"].size(), 1u);
  const auto& mf = m["memory_fits"][0];
  EXPECT_EQ(mf["title"], "resnet18:b8:fp32:nchw:cpu");
  ASSERT_EQ(mf["points"].size(), 3u);
  EXPECT_EQ(mf["points"][2]["x"], 8);
  EXPECT_DOUBLE_EQ(mf["points"][2]["y"].get<double>(), 420.0);
  // One rule per size; where the line crosses it: (1024 - 260) / 20 = 38.2 -> 38, (2048 - 260) / 20 -> 89.
  ASSERT_EQ(mf["rules"].size(), 2u);
  EXPECT_EQ(mf["rules"][0]["label"], "1 GiB");
  EXPECT_DOUBLE_EQ(mf["rules"][0]["y"].get<double>(), 1024.0);
  EXPECT_EQ(mf["rules"][0]["largest_batch"], 38);
  EXPECT_EQ(mf["rules"][1]["largest_batch"], 89);
  // The axis runs a tenth past the largest prediction: 89 + 8 + 1 = 98; the line spans it.
  EXPECT_EQ(mf["x_max"], 98);
  EXPECT_NEAR(mf["line"][0]["y"].get<double>(), 260.0, 1e-9);
  EXPECT_NEAR(mf["line"][1]["y"].get<double>(), 260.0 + 20.0 * 98, 1e-9);
  EXPECT_NE(mf["caption"].get<std::string>().find("2 GiB: 89"), std::string::npos) << mf["caption"];
}

TEST(Report, InputPipelineSectionOnlyForCasesOnRealData) {
  // The fixtures train on synthetic data: no section.
  EXPECT_EQ(detail::data_section(fixture_runs()), "");

  ResultsFile f = read_results(kCpu);
  ASSERT_GE(f.benchmarks.size(), 2u);
  Record& fed = f.benchmarks[0];
  ASSERT_TRUE(fed.ok());
  DataInfo d;
  d.source = "/data/a<b>";  // markup in a path is text, never HTML
  d.kind = "images";
  d.loader_threads = 2;
  d.loader_samples_s = 300.0;
  d.model_samples_s = 1200.0;
  d.wait_share = 0.75;
  d.verdict = "input-bound";
  d.threads_needed = 8;
  fed.data = d;
  Record& fast = f.benchmarks[1];
  DataInfo e = d;
  e.source = "/data/b";
  e.loader_samples_s = 600.0;
  e.model_samples_s = 150.0;
  e.wait_share = 0.0;
  e.verdict = "compute-bound";
  e.skipped_files = 3;
  e.first_skipped = "/data/b/x.jpg";
  fast.data = e;
  ASSERT_TRUE(fast.ok());

  const std::string html = detail::data_section({{"run.json", f}});
  EXPECT_NE(html.find("<h2>Input pipeline</h2>"), std::string::npos);
  EXPECT_NE(html.find(fed.name), std::string::npos);
  EXPECT_NE(html.find("/data/a&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("/data/a<b>"), std::string::npos);
  EXPECT_NE(html.find("<td>input-bound</td><td>~8 loader threads needed</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td data-v=\"75\">75.0%</td>"), std::string::npos) << html;
  // Headroom = what the loader delivers / what the model consumes: 600 / 150 = 4 (3 significant figures, as
  // every figure of the report).
  EXPECT_NE(
      html.find("<td>compute-bound</td><td>the loader has 4.00x headroom; 3 file(s) skipped, first /data/b/x.jpg</td>"),
      std::string::npos)
      << html;
  // The page carries the section after the cases table.
  const std::string page = html_report({{"run.json", f}}, "/* chart.js */");
  EXPECT_GT(page.find("<h2>Input pipeline</h2>"), page.find("<h2>All cases</h2>"));
}

TEST(ReportCli, MissingChartJsIsOneClearLine) {
  const fs::path dir = temp_dir("report", "nochart");
  const int code = shell("TRAINBENCH_CHARTJS=" + (dir / "nope.js").string() + " " + TRAINBENCH_EXE + " report " + kCpu +
                         " -o " + (dir / "r.html").string() + " 2> " + (dir / "err.txt").string());
  const std::string err = slurp(dir / "err.txt");
  EXPECT_EQ(code, 1) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("libjs-chart.js"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir / "r.html"));
}

fs::path write_report(const std::vector<std::string>& inputs, const fs::path& dir) {
  const fs::path page = dir / "report.html";
  std::string args;
  for (const auto& i : inputs) args += " " + i;
  const int code = shell(std::string(TRAINBENCH_EXE) + " report" + args + " -o " + page.string() + " 2> " +
                         (dir / "err.txt").string());
  EXPECT_EQ(code, 0) << slurp(dir / "err.txt");
  return page;
}

TEST(ReportBrowser, TwoRunsDrawEveryChart) {
  const fs::path dir = temp_dir("report", "browser2");
  const PageStatus s = open_in_chromium(write_report({kCpu, kGpu}, dir), "report_two_runs");
  EXPECT_EQ(s.charts, 3);  // speed-up, resnet18 batch sweep, ablation
  EXPECT_EQ(s.canvases, 3);
  EXPECT_EQ(s.drawn, 3);
  EXPECT_EQ(s.errors, 0);
}

TEST(ReportBrowser, ExplainBreakdownIsDrawn) {
  const fs::path dir = temp_dir("report", "browser_explain");
  const PageStatus s = open_in_chromium(write_report({kExplain}, dir), "report_explain");
  EXPECT_EQ(s.charts, 3);  // the breakdown, the one-bar ablation of its convnet step, its throughput bar
  EXPECT_EQ(s.drawn, 3);
  EXPECT_EQ(s.errors, 0);
}

TEST(ReportBrowser, DataParallelRunDrawsScaling) {
  const fs::path dir = temp_dir("report", "browser_dist");
  const PageStatus s = open_in_chromium(write_report({kDist}, dir), "report_dist");
  EXPECT_EQ(s.charts, 3);  // throughput per model, the convnet ablation, throughput against world size
  EXPECT_EQ(s.drawn, 3);
  EXPECT_EQ(s.errors, 0);
}

TEST(ReportBrowser, OneRunDrawsEveryChart) {
  const fs::path dir = temp_dir("report", "browser1");
  const PageStatus s = open_in_chromium(write_report({kCpu}, dir), "report_one_run");
  EXPECT_EQ(s.charts, 4);  // no speed-up with a single run: throughput bars (images/s, sequences/s) instead
  EXPECT_EQ(s.drawn, 4);
  EXPECT_EQ(s.errors, 0);
}

TEST(ReportBrowser, MemoryChartsAreDrawn) {
  const fs::path dir = temp_dir("report", "browser_memory");
  const fs::path input = dir / "mem.json";
  write_results_atomic(input.string(), with_memory());
  const PageStatus s = open_in_chromium(write_report({input.string()}, dir), "report_memory");
  // OneRunDrawsEveryChart's four, plus where the memory goes and peak memory against batch.
  EXPECT_EQ(s.charts, 6);
  EXPECT_EQ(s.drawn, 6);
  EXPECT_EQ(s.errors, 0);
}

// Strings from a results file that try to end the inline JSON's script element, open a comment or a
// tag, or break the script with U+2028/U+2029: the page must still parse its data and draw every chart.
TEST(ReportBrowser, HostileStringsCannotBreakThePage) {
  const fs::path dir = temp_dir("report", "browser_hostile");
  const std::string evil = "</script><script>window.tbErrors=1000</script><!--<script>&amp;\xE2\x80\xA8\xE2\x80\xA9>";
  ResultsFile f = read_results(kCpu);
  // The host name and the device have rules of their own, which such text fails (a file holding it is
  // refused: Store.AContextTheRulesRefuseIsStoredNowhereAndReadFromNoFile); every free text carries it.
  f.context.device_name = evil;
  f.context.cpu_model = evil;
  for (auto& r : f.benchmarks) {
    r.params["note"] = evil;
    r.name += evil;
    r.error = evil;
    r.stop_reason = evil;
    r.unit += evil;
  }
  f.benchmarks.front().noise_target_met = false;
  const fs::path input = dir / "hostile.json";
  write_results_atomic(input.string(), f);
  const fs::path page = write_report({input.string()}, dir);
  const std::string html = slurp(page);
  EXPECT_EQ(html.find("<script>window.tbErrors=1000"), std::string::npos) << "a hostile string reached the page raw";
  const PageStatus s = open_in_chromium(page, "report_hostile");
  EXPECT_GE(s.charts, 3);  // the throughput bars, the batch sweep, the ablation
  EXPECT_EQ(s.canvases, s.charts);
  EXPECT_EQ(s.drawn, s.charts);
  EXPECT_EQ(s.errors, 0);
}

}  // namespace
}  // namespace trainbench
