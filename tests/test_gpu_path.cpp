// The GPU path as far as a CPU can test it: pure precisions and bf16 autocast on CPU, the fp16 loss
// scaler on synthetic gradients, the throttling filter on injected clock readings, NVML's absence,
// the GPU warm-up rule, the GPU settings' CPU values, and the new JSON fields (old files still load).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "core/device.h"
#include "core/energy.h"
#include "core/gpu_clock.h"
#include "core/stopping.h"
#include "results/context.h"
#include "results/record.h"
#include "results/results_file.h"
#include "runner/measure.h"
#include "workloads/loss_scaler.h"
#include "workloads/training.h"
#include "workloads/workload.h"

namespace trainbench {
namespace {

// ---- loss scaler -------------------------------------------------------------------------------

std::vector<torch::Tensor> params_with_grads(const std::vector<float>& grads) {
  std::vector<torch::Tensor> params;
  for (float g : grads) {
    auto p = torch::ones({2}, torch::requires_grad());
    p.mutable_grad() = torch::full({2}, g);
    params.push_back(p);
  }
  return params;
}

TEST(LossScaler, DefaultsAreGradScalers) {
  const LossScalerOptions o;
  EXPECT_EQ(o.init_scale, 65536.0);
  EXPECT_EQ(o.growth_factor, 2.0);
  EXPECT_EQ(o.backoff_factor, 0.5);
  EXPECT_EQ(o.growth_interval, 2000);
  EXPECT_EQ(LossScaler().scale_value(), 65536.0);
}

TEST(LossScaler, ScalesTheLossAndUnscalesTheGradients) {
  LossScaler s;
  EXPECT_FLOAT_EQ(s.scale(torch::tensor(0.5f)).item<float>(), 32768.0f);
  auto params = params_with_grads({65536.0f, -131072.0f});
  EXPECT_TRUE(s.unscale(params));
  EXPECT_FLOAT_EQ(params[0].grad()[0].item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(params[1].grad()[1].item<float>(), -2.0f);
}

TEST(LossScaler, InfOrNanSkipsTheStepAndBacksOff) {
  for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    LossScaler s;
    auto params = params_with_grads({1.0f, bad});
    torch::optim::SGD sgd(params, torch::optim::SGDOptions(0.1));
    EXPECT_FALSE(s.step(sgd, params));
    EXPECT_TRUE(torch::equal(params[0].detach(), torch::ones({2}))) << "the optimizer step must not run";
    EXPECT_EQ(s.scale_value(), 32768.0);
    EXPECT_EQ(s.skipped_steps(), 1);
    EXPECT_EQ(s.growth_tracker(), 0);
  }
}

TEST(LossScaler, GrowsAfterGrowthIntervalFiniteStepsInARow) {
  LossScalerOptions o;
  o.init_scale = 1024.0;
  o.growth_interval = 3;
  LossScaler s(o);
  auto params = params_with_grads({1024.0f});
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(0.5));
  EXPECT_TRUE(s.step(sgd, params));
  EXPECT_FLOAT_EQ(params[0][0].item<float>(), 0.5f) << "1 - 0.5 * (1024 / 1024)";
  s.update(false);
  EXPECT_EQ(s.scale_value(), 1024.0) << "2 of 3";
  s.update(true);  // an overflow restarts the count
  EXPECT_EQ(s.scale_value(), 512.0);
  for (int i = 0; i < 2; ++i) s.update(false);
  EXPECT_EQ(s.scale_value(), 512.0);
  s.update(false);
  EXPECT_EQ(s.scale_value(), 1024.0);
  EXPECT_EQ(s.growth_tracker(), 0);
  EXPECT_EQ(s.skipped_steps(), 1);
}

// ---- precisions ----------------------------------------------------------------------------------

WorkloadOptions tiny(const std::string& model, const std::string& precision) {
  WorkloadOptions o;
  o.model = model;
  o.batch = 2;
  o.precision = parse_precision(precision);
  if (model == "convnet") o.params = {{"channels", "4"}, {"depth", "2"}, {"image", "8"}};
  if (model == "bilstm") o.params = {{"vocab", "50"}, {"embed", "8"}, {"hidden", "8"}, {"seq", "6"}};
  if (model == "bert") o.params = {{"layers", "1"}, {"hidden", "32"}, {"heads", "2"}, {"vocab", "50"}, {"seq", "8"}};
  return o;
}

TEST(Precision, KnownPrecisionsNameThePureTypes) {
  EXPECT_EQ(precision_names(), (std::vector<std::string>{"fp32", "fp16", "bf16", "fp16-pure", "bf16-pure"}));
  EXPECT_TRUE(parse_precision("bf16-pure").pure);
  EXPECT_FALSE(parse_precision("bf16").pure);
  EXPECT_EQ(parse_precision("fp16-pure").dtype, at::kHalf);
  EXPECT_EQ(parse_precision("bf16").dtype, at::kBFloat16);
  EXPECT_EQ(parse_precision("fp32").dtype, at::kFloat);
  for (const auto& name : precision_names()) EXPECT_EQ(parse_precision(name).str(), name);
  EXPECT_EQ(layout_names(), (std::vector<std::string>{"nchw", "nhwc"}));
  for (const auto& name : layout_names()) EXPECT_EQ(to_string(parse_layout(name)), name);
  EXPECT_THROW(parse_layout("nwhc"), std::invalid_argument);
}

TEST(Precision, ToDtypeConvertsFloatsAndKeepsIntegerBuffers) {
  torch::nn::BatchNorm2d bn(4);
  detail::to_dtype(*bn, at::kBFloat16);
  EXPECT_EQ(bn->weight.scalar_type(), at::kBFloat16);
  EXPECT_EQ(bn->running_mean.scalar_type(), at::kBFloat16);
  EXPECT_EQ(bn->num_batches_tracked.scalar_type(), at::kLong);
}

TEST(Precision, Bf16PureTrainsOnCpu) {
  for (const std::string model : {"convnet", "bert", "resnet18"}) {
    SCOPED_TRACE(model);
    auto o = tiny(model, "bf16-pure");
    if (model == "resnet18") o.batch = 1;  // a zoo CNN: BatchNorm buffers and a converted image input
    auto w = make_workload(o);
    w->step();
    w->step();
    EXPECT_TRUE(std::isfinite(w->last_loss()));
    EXPECT_EQ(w->skipped_steps(), 0);
    EXPECT_TRUE(std::isnan(w->loss_scale())) << "no loss scaling outside fp16 mixed precision";
    // Forward-only: the step runs in the pure type and leaves the weights untouched (no optimizer).
    o.forward_only = true;
    auto f = make_workload(o);
    std::vector<torch::Tensor> before;
    for (const auto& p : f->trainable_parameters()) before.push_back(p.detach().clone());
    ASSERT_FALSE(before.empty());
    EXPECT_EQ(before.front().scalar_type(), at::kBFloat16);
    f->step();
    f->step();
    const auto after = f->trainable_parameters();
    for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i], after[i])) << "parameter " << i;
  }
}

TEST(Precision, Fp16KindsNeedAGpu) {
  for (const std::string p : {"fp16", "fp16-pure"}) {
    try {
      make_workload(tiny("convnet", p));
      ADD_FAILURE() << p << " ran on CPU";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("needs a GPU"), std::string::npos) << e.what();
    }
  }
}

// ---- clocks --------------------------------------------------------------------------------------

TEST(ClockFilter, DropsSamplesUnder75PercentOfTheDefaultClock) {
  ClockFilter f(1980.0);  // 75%: 1485 MHz
  EXPECT_TRUE(f.keep(1980.0));
  EXPECT_FALSE(f.keep(1400.0));
  EXPECT_TRUE(f.keep(1485.0));
  EXPECT_TRUE(f.keep(std::nullopt)) << "no reading: kept, and not in the mean";
  EXPECT_FALSE(f.keep(200.0));
  EXPECT_EQ(f.dropped(), 2);
  ASSERT_TRUE(f.mean_kept_mhz().has_value());
  EXPECT_DOUBLE_EQ(*f.mean_kept_mhz(), (1980.0 + 1485.0) / 2);
}

TEST(ClockFilter, WithoutADefaultClockKeepsEverything) {
  ClockFilter f(std::nullopt);
  EXPECT_TRUE(f.keep(100.0));
  EXPECT_EQ(f.dropped(), 0);
  EXPECT_DOUBLE_EQ(*f.mean_kept_mhz(), 100.0);
  EXPECT_FALSE(ClockFilter(1000.0).mean_kept_mhz().has_value());
}

TEST(ClockReader, InjectedReadingsFeedTheFilter) {
  std::vector<double> readings = {1900, 1000, 1950};
  size_t i = 0;
  SmClockReader reader([&]() -> std::optional<double> { return readings.at(i++); }, 1980.0);
  ClockFilter f(reader.default_mhz());
  int kept = 0;
  for (int k = 0; k < 3; ++k) kept += f.keep(reader.read()) ? 1 : 0;
  EXPECT_EQ(kept, 2);
  EXPECT_EQ(f.dropped(), 1);
}

bool nvml_present() {
  const NvmlLibrary nvml;
  return nvml.available();
}

TEST(Nvml, AbsenceIsReportedCleanly) {
  if (nvml_present()) GTEST_SKIP() << "this machine has NVML";
  const NvmlLibrary nvml;
  EXPECT_FALSE(nvml.available());
  EXPECT_NE(nvml.reason().find("libnvidia-ml.so.1"), std::string::npos) << nvml.reason();
  EXPECT_EQ(nvml.device_by_index(0), nullptr);
  EXPECT_FALSE(nvml.sm_clock_mhz(nullptr).has_value());
  EXPECT_FALSE(nvml.driver_version().has_value());
  EXPECT_FALSE(nvidia_driver_version().has_value());
}

TEST(Nvml, ALibraryWithoutTheFunctionsIsNotNvml) {
  const NvmlLibrary not_nvml("libm.so.6");
  EXPECT_FALSE(not_nvml.available());
  EXPECT_NE(not_nvml.reason().find("lacks"), std::string::npos) << not_nvml.reason();
  EXPECT_NE(NvmlLibrary("libtrainbench-no-such-library.so").reason().find("not present"), std::string::npos);
}

TEST(ClockReader, CpuHasNoClock) {
  const auto r = SmClockReader::for_device(DeviceSpec{});
  EXPECT_FALSE(r->read().has_value());
  EXPECT_FALSE(r->default_mhz().has_value());
}

// ---- warm-up -------------------------------------------------------------------------------------

bool warm_done(const WarmupRule& r, const std::vector<double>& s, double elapsed = 0.0) { return r.done({s, elapsed}); }

TEST(WarmupRule, FixedRunsExactlyTheSteps) {
  EXPECT_TRUE(warm_done(WarmupRule::fixed(0), {}));
  EXPECT_FALSE(warm_done(WarmupRule::fixed(2), {9.0}));
  EXPECT_TRUE(warm_done(WarmupRule::fixed(2), {9.0, 9.0}));
}

TEST(WarmupRule, OnAGpuWaitsUntilStepTimesSettle) {
  const WarmupRule r = WarmupRule::until_stable(2, 100.0);
  // Algorithm search makes the first steps slow; five steps within 10% of their median end it.
  std::vector<double> s = {5.0, 3.0, 1.0, 1.05, 0.98, 1.0};
  EXPECT_FALSE(warm_done(r, s)) << "3.0 is still in the window";
  s.push_back(1.02);
  EXPECT_TRUE(warm_done(r, s));
  EXPECT_FALSE(warm_done(WarmupRule::until_stable(8, 100.0), s)) << "at least --warmup steps";
  EXPECT_TRUE(warm_done(r, {5.0, 3.0, 1.0}, 100.0)) << "the time limit ends a warm-up that never settles";
  EXPECT_TRUE(warm_done(WarmupRule::until_stable(1, 100.0, 5, 0.1, 3), {5.0, 3.0, 1.0})) << "step limit";
  MeasureSettings m;
  m.warmup_steps = 1;
  EXPECT_FALSE(warm_done(m.warmup(false), {7.0})) << "CPU too waits for the step time by default";
  EXPECT_TRUE(warm_done(m.warmup(false), {7.0, 3.0, 1.0, 1.02, 0.99})) << "CPU: the last 3 within 10%";
  EXPECT_FALSE(warm_done(m.warmup(false, 3), {7.0, 3.0, 1.0, 1.02, 0.99})) << "the workload's 3, then 3 more";
  EXPECT_TRUE(warm_done(m.warmup(false, 3), {7.0, 3.0, 1.0, 1.02, 0.99, 1.0}));
  EXPECT_FALSE(warm_done(m.warmup(true), {7.0, 3.0, 1.0, 1.02, 0.99})) << "GPU: the last 5";
  m.warmup_fixed = true;
  EXPECT_TRUE(warm_done(m.warmup(false), {7.0})) << "--warmup 1: exactly one";
  EXPECT_TRUE(warm_done(m.warmup(true), {7.0}));
}

// ---- GPU settings and context on a CPU ------------------------------------------------------------

TEST(GpuSettings, CpuValues) {
  const DeviceSpec cpu;
  // --tf32 on for a CPU case must leave LibTorch's global GPU math settings as they were.
  auto& ctx = at::globalContext();
  const bool cublas = ctx.allowTF32CuBLAS(), cudnn = ctx.allowTF32CuDNN(), bench = ctx.benchmarkCuDNN();
  configure_gpu_math(cpu, true);
  EXPECT_EQ(ctx.allowTF32CuBLAS(), cublas);
  EXPECT_EQ(ctx.allowTF32CuDNN(), cudnn);
  EXPECT_EQ(ctx.benchmarkCuDNN(), bench);
  EXPECT_EQ(algorithm_search_mode(cpu), "none");
  EXPECT_EQ(tf32_mode(cpu), "n/a");
  EXPECT_EQ(peak_reserved_bytes(cpu), 0);
  EXPECT_FALSE(gpu_pci_bus_id(cpu).has_value());
#if !defined(TRAINBENCH_WITH_HIP)
  EXPECT_FALSE(is_rocm_build());
#endif
}

TEST(GpuContext, RuntimeVersionFromShowConfig) {
  EXPECT_EQ(detail::gpu_runtime_from_config("  - CUDA Runtime 12.4\n  - CuDNN 8.9.2  (built against CUDA 12.1)\n"),
            std::optional<std::string>("CUDA 12.4"));
  EXPECT_EQ(detail::gpu_runtime_from_config("  - HIP Runtime 6.2.41133\n  - MIOpen 3.2.0\n"),
            std::optional<std::string>("HIP 6.2.41133"));
  EXPECT_FALSE(detail::gpu_runtime_from_config("  - Intel(R) MKL-DNN v2.6.3\n").has_value());
  EXPECT_EQ(detail::version_after("  - CuDNN 8.9.2  (built against CUDA 12.1)", "CuDNN"),
            std::optional<std::string>("8.9.2"));
}

// 2.x's show_config() names the CUDA and cuDNN it was built with in its "Build settings" line (the text
// below is pip torch 2.11.0+cu130's, cut); torch::cuda::nccl::version() packs NCCL's major << 32 |
// minor << 16 | patch (torch/csrc/cuda/nccl.cpp).
TEST(GpuContext, BuildVersionsFromShowConfig) {
  const std::string config =
      "  - Build settings: BLAS_INFO=mkl, BUILD_TYPE=Release, COMMIT_SHA=70d99e9, CUDA_VERSION=13.0, "
      "CUDNN_VERSION=9.19.0, CXX_COMPILER=/opt/rh/gcc-toolset-13/root/usr/bin/c++, TORCH_VERSION=2.11.0, "
      "USE_CUDA=ON, USE_CUDNN=ON,\n";
  EXPECT_EQ(detail::build_setting(config, "CUDA_VERSION"), std::optional<std::string>("13.0"));
  EXPECT_EQ(detail::build_setting(config, "CUDNN_VERSION"), std::optional<std::string>("9.19.0"));
  EXPECT_EQ(detail::build_setting(config, "TORCH_VERSION"), std::optional<std::string>("2.11.0"));
  EXPECT_EQ(detail::build_setting(config, "USE_CUDNN"), std::optional<std::string>("ON"));
  EXPECT_FALSE(detail::build_setting(config, "VERSION").has_value()) << "a key matches whole, not as a suffix";
  EXPECT_FALSE(detail::build_setting("  - Build settings: BLAS_INFO=open, USE_CUDA=OFF,\n", "CUDA_VERSION"));
  EXPECT_EQ(detail::nccl_version_from_packed((uint64_t{2} << 32) | (28u << 16) | 9u), "2.28.9");
  EXPECT_EQ(detail::nccl_version_from_packed(8591769609u), "2.28.9");  // the value pip torch 2.11 returns
  EXPECT_EQ(detail::nccl_version_from_packed((uint64_t{2} << 32) | (7u << 16) | 8u), "2.7.8");
}

// A CUDA LibTorch records what it was built with even for a CPU run (the NCCL it loaded answers
// without a GPU): "13.0", "9.19.0", "2.28.9" for pip torch 2.11.0+cu130.
TEST(GpuContext, CudaBuildRecordsItsVersionsOnCpuRuns) {
  const Context c = collect_context(1, "cpu");
#if defined(TRAINBENCH_WITH_CUDA) && !defined(TRAINBENCH_WITH_HIP)
  const std::regex dotted(R"([0-9]+\.[0-9]+(\.[0-9]+)?)");
  ASSERT_TRUE(c.cuda_build_version && c.cudnn_version && c.nccl_version);
  EXPECT_TRUE(std::regex_match(*c.cuda_build_version, dotted)) << *c.cuda_build_version;
  EXPECT_TRUE(std::regex_match(*c.cudnn_version, dotted)) << *c.cudnn_version;
  EXPECT_TRUE(std::regex_match(*c.nccl_version, dotted)) << *c.nccl_version;
  EXPECT_TRUE(std::regex_match(*c.nccl_version, std::regex(R"(2\.[0-9]{1,2}\.[0-9]{1,2})")))
      << "LibTorch 2.x links NCCL 2.x.y: " << *c.nccl_version;
#else
  EXPECT_FALSE(c.cuda_build_version || c.nccl_version) << "a CPU LibTorch was built with no CUDA";
#endif
}

TEST(GpuContext, CpuRunsHaveNoGpuFields) {
  const Context c = collect_context(1, "cpu");
  EXPECT_FALSE(c.gpu_count || c.gpu_sm_count || c.gpu_arch || c.gpu_driver_version || c.gpu_runtime_version);
  const auto j = to_json(c);
  EXPECT_TRUE(j.at("gpu_count").is_null());
  EXPECT_TRUE(j.at("gpu_runtime_version").is_null());
}

TEST(GpuContext, OldContextsWithoutGpuFieldsLoad) {
  Context c = collect_context(1, "cpu");
  c.gpu_count = 8;
  c.gpu_arch = "sm_90";
  auto j = to_json(c);
  EXPECT_EQ(context_from_json(j).gpu_arch, std::optional<std::string>("sm_90"));
  EXPECT_EQ(context_from_json(j).gpu_count, std::optional<int>(8));
  for (const char* k : {"gpu_count", "gpu_sm_count", "gpu_arch", "gpu_driver_version", "gpu_runtime_version"})
    j.erase(k);
  const Context old = context_from_json(j);
  EXPECT_FALSE(old.gpu_count.has_value());
  EXPECT_FALSE(old.gpu_arch.has_value());
}

// ---- record fields -------------------------------------------------------------------------------

TEST(GpuRecord, NewFieldsRoundTripAndOldRecordsLoad) {
  Record r;
  r.name = "bert:b8:fp16:nchw:cuda:0";
  r.status = Status::ok;
  r.peak_reserved_bytes = 123456789;
  r.tf32 = "on";
  r.algorithm_search = "cudnn benchmark";
  r.skipped_steps = 3;
  r.loss_scale = 16384.0;
  r.mean_sm_clock_mhz = 1975.5;
  r.throttled_samples = 2;
  const auto j = to_json(r);
  EXPECT_EQ(to_json(record_from_json(j)), j);
  const Record back = record_from_json(j);
  EXPECT_EQ(back.loss_scale, 16384.0);
  EXPECT_EQ(back.algorithm_search, "cudnn benchmark");

  const auto none = to_json(Record{});
  EXPECT_TRUE(none.at("loss_scale").is_null());
  EXPECT_TRUE(none.at("mean_sm_clock_mhz").is_null());
  EXPECT_EQ(to_json(record_from_json(none)), none);

  auto old = j;
  for (const char* k : {"peak_reserved_bytes", "tf32", "algorithm_search", "skipped_steps", "loss_scale",
                        "mean_sm_clock_mhz", "throttled_samples"})
    old.erase(k);
  const Record o = record_from_json(old);
  EXPECT_EQ(o.tf32, "n/a");
  EXPECT_EQ(o.algorithm_search, "none");
  EXPECT_EQ(o.skipped_steps, 0);
  EXPECT_TRUE(std::isnan(o.loss_scale));
  EXPECT_EQ(o.throttled_samples, 0);
  auto wrong = j;
  wrong["skipped_steps"] = "three";
  EXPECT_THROW(record_from_json(wrong), std::runtime_error) << "present keys are still type-checked";
}

// ---- measuring on CPU ----------------------------------------------------------------------------

Case tiny_case(const std::string& precision) {
  Case c;
  static_cast<WorkloadOptions&>(c) = tiny("convnet", precision);
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

// ---- scripts/gpu-check.sh -----------------------------------------------------------------------

TEST(GpuCheckScript, WithoutTheHeaderFolderItStopsWithOneClearLine) {
  namespace fs = std::filesystem;
  const fs::path dir = test::temp_dir("gpu", "check");
  const std::string cmd = "OUT=" + (dir / "out").string() + " TRAINBENCH_THIRD_PARTY=" + (dir / "absent").string() +
                          " bash " + TRAINBENCH_SOURCE_DIR + "/scripts/gpu-check.sh > " + (dir / "o.txt").string() +
                          " 2> " + (dir / "e.txt").string();
  EXPECT_EQ(test::shell(cmd), 2);
  const std::string err = test::slurp(dir / "e.txt");
  EXPECT_EQ(test::count_lines(err), 1) << err;
  EXPECT_NE(err.find("no header-only dependencies in " + (dir / "absent").string()), std::string::npos) << err;
  EXPECT_NE(err.find("scripts/vendor-headers.sh"), std::string::npos) << err;
}

}  // namespace
}  // namespace trainbench
