// Devices: the table of device kinds; parse a user's device string, check it exists, synchronise it,
// read its memory statistics.
// The CPU build never includes a CUDA header; GPU code compiles only when CMake found CUDA/HIP.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device_text.h"

namespace trainbench {

struct DeviceKind;

// A device's LibTorch device, and its kind's hooks (the latter throws std::invalid_argument for a type
// outside the table).
torch::Device torch_device(const DeviceSpec& d);
const DeviceKind& device_kind(const DeviceSpec& d);

// A GPU caching allocator's statistics, in bytes (index 0 of LibTorch's stat arrays: every pool).
struct AllocatorStats {
  int64_t allocated_current = 0;
  int64_t allocated_peak = 0;
  int64_t reserved_peak = 0;
};

// What trainbench asks of a type of device. One entry per type in device.cpp's table, so a new device
// (xpu, mps) is one entry there; a hook is null where the type has nothing to do (the CPU's memory is
// the process's: max RSS, the counting allocator in src/memory).
struct DeviceKind {
  const char* name;  // "cpu", "cuda": the text of --device, descriptors and records
  c10::DeviceType torch_type;
  bool gpu;                        // its own memory behind a caching allocator; kernels run asynchronously
  bool indexed;                    // "name:N" picks one of several
  bool (*available)();             // usable in this build and machine
  int (*count)();                  // how many are present
  void (*synchronize)(int index);  // waits for every queued operation (-1: the current device)
  void (*reset_peak)(int index);
  AllocatorStats (*allocator_stats)(int index);
};

// Every device type this build knows, the CPU first.
const std::vector<DeviceKind>& device_kinds();
// The entry named `name` ("cuda"), nullptr when none.
const DeviceKind* find_device_kind(const std::string& name);
// The kind a device's text names ("cuda:0" in a record or context: cuda), nullptr when none.
const DeviceKind* device_kind_of(const std::string& device_text);
// Empty when the device can run here, else one line saying why not.
std::string device_unavailable_reason(const DeviceSpec& d);

// The best device this build and machine have: the first available GPU type ("cuda"), else "cpu".
std::string best_device();

// Waits until every queued operation on the device has finished (no-op on CPU).
void synchronize(const DeviceSpec& d);

// Makes a GPU the calling thread's current device (NCCL sets up its communicators on it), through
// LibTorch's device-generic guard, which GPU builds register and a CPU build needs no header for.
// No-op on CPU.
void set_current_device(const DeviceSpec& d);

// Peak memory since the process started (CPU: max resident set size) or since the last reset (GPU:
// caching-allocator peak of allocated bytes).
void reset_peak_memory(const DeviceSpec& d);
int64_t peak_memory_bytes(const DeviceSpec& d);

// The GPU caching allocator's bytes allocated now; 0 on CPU (src/memory counts the CPU's).
int64_t allocated_bytes(const DeviceSpec& d);

// The GPU caching allocator's peak reserved bytes (allocated plus cached) since the last reset; 0 on CPU.
int64_t peak_reserved_bytes(const DeviceSpec& d);

// Caps what the GPU caching allocator may reserve on the device at `bytes` (its fraction of the
// card's memory; the runtime's context and libraries' own allocations lie outside it): beyond it a
// training step runs out of memory as on a card that size. Empty when done (or nothing to do: a CPU,
// bytes <= 0), else one line saying why not.
std::string limit_gpu_memory(const DeviceSpec& d, int64_t bytes);

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
