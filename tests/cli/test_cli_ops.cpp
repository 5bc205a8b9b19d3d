// `trainbench op`, `peak` and `explain` from the command line: outputs, results files, the peak cache
// feeding `run`, and bad input as one line with exit code 2.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "cli/options.h"
#include "ops/peak.h"
#include "results/results_file.h"

namespace trainbench {
namespace {

using namespace test;

TEST(CliOps, OpTimesEachPhaseAndWritesItsResults) {
  const auto dir = temp_dir("cli_ops", "op");
  const auto r =
      run_trainbench("op conv:mb2ic8ih8oc8kh3ph1g8 gemm:m16n16k16 --layout nchw,nhwc --min-time 0 --max-time 0.5 -o " +
                         (dir / "op.json").string(),
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("depthwise conv 3x3 g=8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bwd_weights"), std::string::npos);
  const ResultsFile f = read_results((dir / "op.json").string());
  ASSERT_EQ(f.ops.size(), 4u);  // 2 ops x 2 layouts
  EXPECT_EQ(f.ops[0].name, "conv:mb2ic8ih8oc8kh3ph1g8");
  EXPECT_EQ(f.ops[1].layout, "nhwc");
  for (const auto& o : f.ops) {
    ASSERT_TRUE(o.ok()) << o.error;
    EXPECT_EQ(o.phases.size(), 3u);
  }
}

TEST(CliOps, BadOpInputIsOneLineAndExitTwo) {
  const auto dir = temp_dir("cli_ops", "bad");
  for (const std::string args :
       {"op conv:mb2ic8ih8oc8kh3g3", "op conv:mb2ic8 --precision fp64", "op gemm:m1n1k1 --precision fp64",
        "explain --model nosuch --batch 2", "explain --model convnet --batch 2 --set depth=1,2",
        "peak --precision int8", "op gemm:m1n1k1 --device tpu"}) {
    const auto r = run_trainbench(args, dir);
    EXPECT_TRUE(refused(r, {})) << args;
  }
  const auto r = run_trainbench("op conv:mb2ic8ih8oc8kh3g3", dir);
  EXPECT_NE(r.err.find("'g3' groups must divide ic (8) and oc (8)"), std::string::npos) << r.err;
}

// peak fills the cache; a run on the same device and thread count then shows its % of that peak.
TEST(CliOps, PeakIsCachedAndRunsShowPercentOfIt) {
  const auto dir = temp_dir("cli_ops", "peak");
  const std::string env = "TRAINBENCH_CACHE_DIR=" + (dir / "cache").string() + " ";
  const auto none = run_trainbench(
      "run --model convnet --set channels=4 --set depth=1 --set image=8 --batch 2 --threads 1 "
      "--min-time 0 --min-steps 2 -f json -o " +
          (dir / "before.json").string(),
      dir);
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_TRUE(std::isnan(read_results((dir / "before.json").string()).benchmarks[0].percent_of_peak));

  const int code = shell(env + TRAINBENCH_EXE + " peak --threads 1 --precision fp32 --gemm-size 128 -o " +
                         (dir / "peak.json").string() + " > " + (dir / "peak.txt").string() + " 2>&1");
  ASSERT_EQ(code, 0) << slurp(dir / "peak.txt");
  EXPECT_NE(slurp(dir / "peak.txt").find("GEMM fp32  128x128x128"), std::string::npos) << slurp(dir / "peak.txt");
  const ResultsFile p = read_results((dir / "peak.json").string());
  ASSERT_TRUE(p.context.peak);
  ASSERT_GT(p.context.peak->peak_for("fp32"), 0.0);

  const int run = shell(env + TRAINBENCH_EXE +
                        " run --model convnet --set channels=4 --set depth=1 --set image=8 --batch 2 "
                        "--threads 1 --min-time 0 --min-steps 2 -o " +
                        (dir / "after.json").string() + " > /dev/null 2>&1");
  ASSERT_EQ(run, 0);
  const ResultsFile after = read_results((dir / "after.json").string());
  ASSERT_TRUE(after.context.peak);
  const Record& rec = after.benchmarks[0];
  EXPECT_NEAR(rec.percent_of_peak, 100.0 * rec.achieved_gflops / p.context.peak->peak_for("fp32"), 1e-6);
}

// A data-parallel record's FLOP/s are the whole job's: its %peak and MFU are over world_size times one
// device's ceiling (every rank on a device like rank 0's). 160 GFLOP/s against a cached 100: 160% for one
// process, 80% for two ranks; MFU 120 GFLOP of model work a second over 2 x 100: 0.6.
TEST(CliOps, DataParallelPercentOfPeakIsOverEveryRanksDevice) {
  const auto dir = temp_dir("cli_ops", "distpeak");
  setenv("TRAINBENCH_CACHE_DIR", (dir / "cache").c_str(), 1);
  PeakInfo p;
  p.device = "cpu";
  p.device_name = "box";
  p.threads = 2;
  p.libtorch_version = "v";
  p.gemm_gflops["fp32"] = 100.0;
  ASSERT_TRUE(store_peak(p));
  Context c;
  c.device_name = "box";
  c.libtorch_version = "v";
  Record r;
  r.status = Status::ok;
  r.device = "cpu";
  r.threads = 2;
  r.precision = "fp32";
  r.achieved_gflops = 160.0;
  r.step_time_s.median = 1.0;
  r.model_flops_per_step = 120e9;
  Record two = r;
  add_percent_of_peak(r, c);
  EXPECT_NEAR(r.percent_of_peak, 160.0, 1e-9);
  EXPECT_NEAR(r.mfu, 1.2, 1e-12);
  two.dist = DistInfo{};
  two.dist->world_size = 2;
  add_percent_of_peak(two, c);
  EXPECT_NEAR(two.percent_of_peak, 80.0, 1e-9);
  EXPECT_NEAR(two.mfu, 0.6, 1e-12);
  unsetenv("TRAINBENCH_CACHE_DIR");
}

TEST(CliOps, ExplainWritesTheStepAndItsLayers) {
  const auto dir = temp_dir("cli_ops", "explain");
  const auto r = run_trainbench(
      "explain --model convnet --set variant=separable --set channels=8 --set depth=2 --set image=8 "
      "--batch 2 --threads 1 --op-time 0 --min-time 0 --min-steps 2 -o " +
          (dir / "ex.json").string(),
      dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("step "), std::string::npos);
  EXPECT_NE(r.out.find("depthwise conv 3x3 g=8"), std::string::npos) << r.out;
  const ResultsFile f = read_results((dir / "ex.json").string());
  ASSERT_EQ(f.benchmarks.size(), 1u);
  ASSERT_TRUE(f.benchmarks[0].ok());
  ASSERT_TRUE(f.explain);
  EXPECT_EQ(f.explain->case_name, f.benchmarks[0].name);
  EXPECT_EQ(f.explain->layers.size(), 3u);
  EXPECT_DOUBLE_EQ(f.explain->step_time_s, f.benchmarks[0].step_time_s.median);
  // Read back from the file: other = the step record's median less count x (fwd + bwd-data + bwd-weights)
  // of every layer, summed here from the layers' own fields.
  double layers = 0.0;
  for (const auto& l : f.explain->layers)
    layers += static_cast<double>(l.count) * (l.fwd_s + l.bwd_data_s + l.bwd_weights_s);
  EXPECT_NEAR(f.explain->other_time_s, f.benchmarks[0].step_time_s.median - layers, 1e-9);
}

}  // namespace
}  // namespace trainbench
