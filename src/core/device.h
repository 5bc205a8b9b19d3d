// Devices: parse a user's device string, check it exists, synchronise it, read its peak memory.
// The CPU build never includes a CUDA header; GPU code compiles only when CMake found CUDA/HIP.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>

namespace trainbench {

struct DeviceSpec {
  std::string type = "cpu";  // "cpu" | "cuda" (ROCm builds also call their GPUs "cuda")
  int index = -1;            // -1: the default device of that type

  std::string str() const;   // "cpu", "cuda", "cuda:1"
  torch::Device torch_device() const;
  bool is_gpu() const { return type == "cuda"; }
  bool operator==(const DeviceSpec& o) const { return type == o.type && index == o.index; }
};

// Throws std::invalid_argument naming the bad value for anything but cpu, cuda, cuda:N.
DeviceSpec parse_device(const std::string& text);

// Empty when the device can run here, else one line saying why not.
std::string device_unavailable_reason(const DeviceSpec& d);

// The best device this build and machine have: "cuda" when a GPU is usable, else "cpu".
std::string best_device();

// Waits until every queued operation on the device has finished (no-op on CPU).
void synchronize(const DeviceSpec& d);

// Peak memory since the process started (CPU: max resident set size) or since the last reset (GPU:
// caching-allocator peak of allocated bytes).
void reset_peak_memory(const DeviceSpec& d);
int64_t peak_memory_bytes(const DeviceSpec& d);

// The GPU caching allocator's peak reserved bytes (allocated plus cached) since the last reset; 0 on CPU.
int64_t peak_reserved_bytes(const DeviceSpec& d);

// True when LibTorch was built for ROCm (HIP): its GPUs are still "cuda" devices.
bool is_rocm_build();

// GPU math settings for a case, applied before the workload is built: convolution algorithm search
// (cuDNN benchmark mode; MIOpen's find mode on ROCm) always on, TF32 in cuBLAS and cuDNN as asked.
// No-op on CPU.
void configure_gpu_math(const DeviceSpec& d, bool tf32);
// What configure_gpu_math left in effect: "cudnn benchmark", "miopen find" or "none" (CPU; or a GPU
// with the search off), and TF32 "on", "off" or "n/a" (CPU).
std::string algorithm_search_mode(const DeviceSpec& d);
std::string tf32_mode(const DeviceSpec& d);

// The GPU's PCI bus id ("0000:3b:00.0") on CUDA builds, to find it in NVML; empty elsewhere.
std::optional<std::string> gpu_pci_bus_id(const DeviceSpec& d);

// Sets the intra-op thread count; 0 means one per hardware core. Returns the count in effect.
int configure_threads(int requested);

}  // namespace trainbench
