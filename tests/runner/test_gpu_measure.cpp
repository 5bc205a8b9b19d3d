// Measuring on a CPU records the GPU fields as not applicable; fp16 on a CPU is the case's error, not
// a crash; out-of-memory messages are oom; --tf32 is checked and carried to the child.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <filesystem>
#include <string>

#include "cli_util.h"
#include "core/device.h"
#include "core/energy.h"
#include "core/failure.h"
#include "results/record.h"
#include "results/results_file.h"
#include "runner/measure.h"
#include "workloads/workload.h"

namespace trainbench {
namespace {

Case tiny_case(const std::string& precision) {
  Case c;
  c.model = "convnet";
  c.batch = 2;
  c.precision = parse_precision(precision);
  c.params = {{"channels", "4"}, {"depth", "2"}, {"image", "8"}};
  return c;
}

MeasureSettings quick() {
  MeasureSettings m;
  m.warmup_steps = 1;
  m.warmup_fixed = true;
  m.min_steps = 2;
  m.min_time_s = 0.0;
  m.max_time_s = 1.0;
  return m;
}

TEST(GpuMeasure, CpuCasesRecordTheGpuFieldsAsNotApplicable) {
  const Record r = measure_case(tiny_case("bf16-pure"), quick());
  ASSERT_EQ(r.status, Status::ok) << r.error;
  EXPECT_EQ(r.tf32, "n/a");
  EXPECT_EQ(r.algorithm_search, "none");
  EXPECT_EQ(r.skipped_steps, 0);
  EXPECT_TRUE(std::isnan(r.loss_scale));
  EXPECT_TRUE(std::isnan(r.mean_sm_clock_mhz));
  EXPECT_EQ(r.throttled_samples, 0);
  EXPECT_EQ(r.peak_reserved_bytes, 0);
  EXPECT_EQ(r.warmup_steps, 1);
  // Energy on a CPU: RAPL where this machine lets it be read, else null.
  if (rapl_energy_counter()) {
    EXPECT_EQ(r.energy_source, std::optional<std::string>("rapl"));
    EXPECT_GT(r.energy_j_per_sample, 0.0);
    EXPECT_GT(r.mean_power_w, 0.0);
  } else {
    EXPECT_FALSE(r.energy_source.has_value());
    EXPECT_TRUE(std::isnan(r.energy_j_per_sample));
    EXPECT_TRUE(std::isnan(r.mean_power_w));
  }
}

TEST(GpuMeasure, Fp16OnCpuIsTheCasesErrorNotACrash) {
  const Record r = measure_case(tiny_case("fp16"), quick());
  EXPECT_EQ(r.status, Status::error);
  EXPECT_NE(r.error.find("needs a GPU"), std::string::npos) << r.error;
}

TEST(GpuMeasure, OutOfMemoryMessagesAreOom) {
  // GPU allocation failures that are not c10::OutOfMemoryError (the type itself goes through
  // measure_workload in test_measure.cpp) are told apart by their message.
  EXPECT_TRUE(is_out_of_memory_message("CUDA out of memory. Tried to allocate 2.00 GiB"));
  EXPECT_TRUE(is_out_of_memory_message("HIP out of memory. Tried to allocate 2.00 GiB"));
  EXPECT_TRUE(is_out_of_memory_message("CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)"));
}

// ---- the flag, end to end ------------------------------------------------------------------------

TEST(GpuCli, Tf32FlagIsCheckedAndCarriedToTheChild) {
  namespace fs = std::filesystem;
  const fs::path dir = test::temp_dir("gpu", "tf32");
  const auto bad =
      test::run_trainbench("run --case convnet:b2:fp32:nchw:cpu --tf32 maybe -o " + (dir / "x.json").string(), dir);
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--tf32"), std::string::npos) << bad.err;
  const auto ok = test::run_trainbench(
      "run --case convnet:channels=4,depth=2,image=8:b2:bf16-pure:nchw:cpu --tf32 on --warmup 1 --min-steps 2 "
      "--min-time 0 --max-time 1 -o " +
          (dir / "r.json").string(),
      dir);
  ASSERT_EQ(ok.code, 0) << ok.err;
  const ResultsFile f = read_results((dir / "r.json").string());
  ASSERT_EQ(f.benchmarks.size(), 1u);
  EXPECT_EQ(f.benchmarks[0].status, Status::ok) << f.benchmarks[0].error;
  EXPECT_EQ(f.benchmarks[0].precision, "bf16-pure");
  EXPECT_EQ(f.benchmarks[0].tf32, "n/a") << "TF32 does not apply on CPU";
}

}  // namespace
}  // namespace trainbench
