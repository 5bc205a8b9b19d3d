// Context: where and with what a run happened (machine, OS, LibTorch build, BLAS, threads, device).
// Collected once per run by the parent; written as the "context" object of a results file and as the
// journal header, so a resumed run keeps the context of its first start.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "results/op_record.h"

namespace trainbench {

struct Context {
  std::string trainbench_version;
  std::string git_revision;
  std::string start_time;  // ISO 8601 UTC, e.g. 2024-05-01T12:34:56Z
  std::string hostname;
  std::string os;          // "Linux 6.1.0-18-amd64 (Debian GNU/Linux 12 (bookworm))"
  std::string cpu_model;
  int cpu_cores = 0;                         // logical CPUs (std::thread::hardware_concurrency)
  std::optional<int> cpu_physical_cores;     // distinct (physical id, core id) pairs in /proc/cpuinfo
  int64_t memory_bytes = 0;                  // MemTotal
  std::string libtorch_version;              // TORCH_VERSION of the headers built against
  std::string build;                         // cpu | cuda | rocm
  std::optional<std::string> onednn_version; // "2.6.3", from at::show_config()
  std::optional<std::string> cudnn_version;
  std::optional<std::string> miopen_version;
  std::optional<std::string> blas_library;   // real path of the BLAS shared library mapped in this process
  std::string blas_kind = "unknown";         // openblas | mkl | blis | atlas | reference | unknown
  int threads = 0;
  std::string device;                        // cpu | cuda:0
  std::string device_name;                   // cpu: the CPU model; cuda: the GPU name
  std::optional<int64_t> device_memory_bytes;  // cpu: MemTotal; cuda: total device memory
  std::string cpu_allocator = "tuned";        // tuned (freed memory kept in the heap) | system (glibc as is)
  std::optional<PeakInfo> peak;               // the device's ceilings from `trainbench peak`, when measured
  // GPU runs only (null for cpu; added within schema 1, files without them read as null).
  std::optional<int> gpu_count;                    // GPUs visible to LibTorch
  std::optional<int> gpu_sm_count;                 // streaming multiprocessors (CUDA builds)
  std::optional<std::string> gpu_arch;             // "sm_90" (compute capability 9.0)
  std::optional<std::string> gpu_driver_version;   // NVIDIA driver, from NVML
  std::optional<std::string> gpu_runtime_version;  // "CUDA 12.4" or "HIP 6.2.41133", from at::show_config()
  int world_size = 1;                         // processes of a data-parallel run (`run --dist`); 1 otherwise
  std::optional<std::string> dist_backend;    // gloo | nccl for a data-parallel run; null otherwise
  // `run --resume --force` with a journal of a different plan: what differed (the older records were kept
  // as they were). Null otherwise, and in files written before it existed.
  std::optional<std::string> resume_note;
};

// Looks at this process and machine. Runs one small matrix product first so that the BLAS LibTorch
// uses is loaded and can be named. `threads` and `device` are recorded as given.
Context collect_context(int threads, const std::string& device);

// The current time as ISO 8601 UTC, e.g. 2024-05-01T12:34:56Z.
std::string iso8601_utc_now();

nlohmann::json to_json(const Context& c);
// Throws std::runtime_error naming the missing or mistyped field.
Context context_from_json(const nlohmann::json& j);

void to_json(nlohmann::json& j, const Context& c);
void from_json(const nlohmann::json& j, Context& c);

namespace detail {
// Pieces of collect_context that parse text, exposed for tests.
std::optional<std::string> onednn_version_from_config(const std::string& show_config);
std::optional<std::string> version_after(const std::string& text, const std::string& label);  // "CuDNN 8.9.2"
std::string blas_kind_of(const std::string& library_path);
// "CUDA 12.4" from "CUDA Runtime 12.4", "HIP 6.2.41133" from "HIP Runtime 6.2.41133"; empty otherwise.
std::optional<std::string> gpu_runtime_from_config(const std::string& show_config);
// From the text of /proc/self/maps: the real path of the mapped BLAS library, preferring libblas.so*
// (what the alternatives system chose) over the implementation it pulls in.
std::optional<std::string> blas_library_from_maps(const std::string& maps);
}  // namespace detail

}  // namespace trainbench
