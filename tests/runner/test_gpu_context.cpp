// The GPU settings' values on a CPU, the context's GPU fields (from show_config text, on CPU runs of a
// CUDA build, absent from CPU runs), and the records' GPU fields (new ones round-trip, old files load).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "results/context.h"
#include "results/record.h"
#include "results/results_file.h"
#include "runner/run_context.h"

namespace trainbench {
namespace {

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

}  // namespace
}  // namespace trainbench
