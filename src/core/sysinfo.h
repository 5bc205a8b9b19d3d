// System facts for a run's context: the machine (CPU, memory, OS, host), the LibTorch build (version,
// oneDNN, cuDNN/MIOpen, the BLAS mapped into this process) and the device (GPU name, memory, SMs,
// driver). Kept apart from results/, which only stores and reads them, as google/benchmark keeps its
// sysinfo apart from its reporters: this is the one place that asks LibTorch, CUDA and /proc.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace trainbench {

struct SystemInfo {
  std::string hostname;
  std::string os;  // "Linux 6.1.0-18-amd64 (Debian GNU/Linux 12 (bookworm))"
  std::string cpu_model;
  int cpu_cores = 0;                          // logical CPUs (std::thread::hardware_concurrency)
  std::optional<int> cpu_physical_cores;      // distinct (physical id, core id) pairs in /proc/cpuinfo
  int64_t memory_bytes = 0;                   // MemTotal
  std::string libtorch_version;               // TORCH_VERSION of the headers built against
  std::string build;                          // cpu | cuda | rocm
  std::optional<std::string> onednn_version;  // "2.6.3", from at::show_config()
  // What the LibTorch was built with (null where it was not: a CPU build), whatever device the run used.
  std::optional<std::string> cuda_build_version;  // "13.0", CUDA_VERSION of at::show_config()'s build settings
  std::optional<std::string> cudnn_version;       // "9.19.0", CUDNN_VERSION (or 1.x's "CuDNN 8.9.2" line)
  std::optional<std::string> nccl_version;        // "2.28.9", the NCCL linked into a CUDA LibTorch
  std::optional<std::string> miopen_version;
  std::optional<std::string> blas_library;     // real path of the BLAS shared library mapped in this process
  std::string blas_kind = "unknown";           // openblas | mkl | blis | atlas | reference | unknown
  std::string device_name;                     // cpu: the CPU model; cuda: the GPU name
  std::optional<int64_t> device_memory_bytes;  // cpu: MemTotal; cuda: total device memory
  // GPU devices only (null for cpu).
  std::optional<int> gpu_count;                    // GPUs visible to LibTorch
  std::optional<int> gpu_sm_count;                 // streaming multiprocessors (CUDA builds)
  std::optional<std::string> gpu_arch;             // "sm_90" (compute capability 9.0)
  std::optional<std::string> gpu_driver_version;   // NVIDIA driver, from NVML
  std::optional<std::string> gpu_runtime_version;  // "CUDA 12.4" or "HIP 6.2.41133", from at::show_config()
};

// Looks at this process, the machine and `device` ("cpu", "cuda:0"). Runs one small matrix product
// first so that the BLAS LibTorch uses is loaded and can be named.
SystemInfo collect_system_info(const std::string& device);

namespace detail {
// Pieces of collect_system_info that parse text, exposed for tests.
std::optional<std::string> onednn_version_from_config(const std::string& show_config);
std::optional<std::string> version_after(const std::string& text, const std::string& label);  // "CuDNN 8.9.2"
std::string blas_kind_of(const std::string& library_path);
// A value of show_config()'s "Build settings: KEY=value, ..." line ("13.0" for CUDA_VERSION), or null.
std::optional<std::string> build_setting(const std::string& show_config, const std::string& key);
// "2.28.9" from torch::cuda::nccl::version(), which packs the NCCL headers LibTorch was built with as
// major << 32 | minor << 16 | patch (torch/csrc/cuda/nccl.cpp).
std::string nccl_version_from_packed(uint64_t packed);
// "CUDA 12.4" from "CUDA Runtime 12.4", "HIP 6.2.41133" from "HIP Runtime 6.2.41133"; empty otherwise.
std::optional<std::string> gpu_runtime_from_config(const std::string& show_config);
// From the text of /proc/self/maps: the real path of the mapped BLAS library, preferring libblas.so*
// (what the alternatives system chose) over the implementation it pulls in.
std::optional<std::string> blas_library_from_maps(const std::string& maps);
}  // namespace detail

}  // namespace trainbench
