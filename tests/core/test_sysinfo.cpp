// The system's facts for a run's context (core/sysinfo): oneDNN's version and the BLAS from LibTorch's
// texts and this process's maps, and collect_context on this machine.
#include <gtest/gtest.h>

#include <ATen/Version.h>
#include <torch/torch.h>

#include <filesystem>
#include <string>

#include "core/sysinfo.h"
#include "results/context.h"
#include "runner/run_context.h"

namespace trainbench {
namespace {

namespace fs = std::filesystem;

TEST(SysInfo, ParsesOneDnnVersionFromShowConfig) {
  EXPECT_EQ(detail::onednn_version_from_config("  - Intel(R) MKL-DNN v2.6.3 (Git Hash N/A)\n"),
            std::optional<std::string>("2.6.3"));
  EXPECT_EQ(detail::onednn_version_from_config("  - Intel(R) oneDNN v3.3.6 (Git Hash 86e6af5)\n"),
            std::optional<std::string>("3.3.6"));
  EXPECT_FALSE(detail::onednn_version_from_config("PyTorch built with:\n  - GCC 12.2\n").has_value());
  EXPECT_EQ(detail::version_after("  - CuDNN 8.9.2\n  - Magma 2.6.1\n", "CuDNN"), std::optional<std::string>("8.9.2"));
}

TEST(SysInfo, NamesTheBlasKind) {
  EXPECT_EQ(detail::blas_kind_of("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"), "openblas");
  EXPECT_EQ(detail::blas_kind_of("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"), "reference");
  EXPECT_EQ(detail::blas_kind_of("/usr/lib/x86_64-linux-gnu/blis-pthread/libblas.so.3"), "blis");
  EXPECT_EQ(detail::blas_kind_of("/opt/intel/lib/libmkl_rt.so.2"), "mkl");
}

TEST(SysInfo, FindsBlasInMapsPreferringLibblasAndIgnoringGpuBlas) {
  const std::string maps =
      "7f00-7f01 r--p 00000000 fe:00 1   /opt/cuda/lib64/libcublas.so.12\n"
      "7f02-7f03 r--p 00000000 fe:00 2   /nonexistent/openblas-pthread/libopenblasp-r0.3.21.so\n"
      "7f04-7f05 r-xp 00000000 fe:00 3   /nonexistent/openblas-pthread/libblas.so.3\n"
      "7f06-7f07 rw-p 00000000 00:00 0   [heap]\n";
  EXPECT_EQ(detail::blas_library_from_maps(maps),
            std::optional<std::string>("/nonexistent/openblas-pthread/libblas.so.3"));
  EXPECT_FALSE(detail::blas_library_from_maps("7f06-7f07 rw-p 00000000 00:00 0   [heap]\n").has_value());
}

TEST(SysInfo, CollectsThisMachine) {
  const Context c = collect_context(3, "cpu");
  EXPECT_EQ(c.trainbench_version, TRAINBENCH_VERSION);
  EXPECT_EQ(c.threads, 3);
  EXPECT_EQ(c.device, "cpu");
  EXPECT_EQ(c.device_name, c.cpu_model);
  EXPECT_GT(c.cpu_cores, 0);
  EXPECT_GT(c.memory_bytes, 0);
  EXPECT_EQ(c.device_memory_bytes, std::optional<int64_t>(c.memory_bytes));
  EXPECT_EQ(c.libtorch_version, TORCH_VERSION);
  EXPECT_FALSE(c.hostname.empty());
  EXPECT_EQ(c.start_time.size(), 20u) << c.start_time;  // 2024-05-01T12:34:56Z
  EXPECT_EQ(c.start_time.back(), 'Z');
#if !defined(TRAINBENCH_WITH_CUDA) && !defined(TRAINBENCH_WITH_HIP)
  EXPECT_EQ(c.build, "cpu");
  EXPECT_FALSE(c.cudnn_version.has_value());
  EXPECT_FALSE(c.cuda_build_version.has_value());
#endif
  // LibTorch links libblas.so.3 dynamically on Debian, and the alternatives system picks which one: the
  // library mapped must be the symlink's target, and its kind follows from Debian's folder for it.
  // A pip LibTorch links MKL inside itself (its build settings say BLAS_INFO=mkl): nothing is mapped to
  // name, and the kind comes from those settings.
  const fs::path alternative = "/usr/lib/x86_64-linux-gnu/libblas.so.3";
  if (at::show_config().find("BLAS_INFO=mkl") != std::string::npos) {
    EXPECT_EQ(c.blas_kind, "mkl");
  } else if (fs::exists(alternative)) {
    ASSERT_TRUE(c.blas_library.has_value()) << "libblas.so.3 is installed but no BLAS was found mapped";
    const fs::path target = fs::canonical(alternative);
    EXPECT_EQ(fs::canonical(*c.blas_library), target);
    const std::map<std::string, std::string> kind_by_folder = {{"openblas-pthread", "openblas"},
                                                               {"openblas-openmp", "openblas"},
                                                               {"openblas-serial", "openblas"},
                                                               {"blis-pthread", "blis"},
                                                               {"blis-openmp", "blis"},
                                                               {"blis-serial", "blis"},
                                                               {"atlas", "atlas"},
                                                               {"blas", "reference"}};
    const auto it = kind_by_folder.find(target.parent_path().filename().string());
    if (it != kind_by_folder.end()) {
      EXPECT_EQ(c.blas_kind, it->second) << target;
    }
  }
  // And it survives JSON.
  EXPECT_EQ(to_json(context_from_json(to_json(c))), to_json(c));
}

}  // namespace
}  // namespace trainbench
