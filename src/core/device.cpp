#include "core/device.h"

#include <sys/resource.h>

#include <stdexcept>
#include <thread>

#include <ATen/Context.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#if defined(TRAINBENCH_WITH_CUDA) || defined(TRAINBENCH_WITH_HIP)
#include <c10/cuda/CUDACachingAllocator.h>
#endif
#if defined(TRAINBENCH_WITH_CUDA) && !defined(TRAINBENCH_WITH_HIP)
#include <ATen/cuda/CUDAContext.h>
#include <cstdio>
#endif

namespace trainbench {

namespace {

// The GPU hooks: LibTorch's CUDA API, which ROCm builds implement for HIP under the same names.
bool gpu_available() { return torch::cuda::is_available(); }
int gpu_count() { return static_cast<int>(torch::cuda::device_count()); }
void gpu_synchronize(int index) { torch::cuda::synchronize(index); }

// Allocator statistics: index 0 of each stat array is the aggregate over pools in every LibTorch
// (StatType::AGGREGATE moved namespaces in 2.x, so the index is spelled out); getDeviceStats took an
// int in 1.13 and takes a c10::DeviceIndex in 2.x, which converts either way.
#if defined(TRAINBENCH_WITH_CUDA) || defined(TRAINBENCH_WITH_HIP)
void gpu_reset_peak(int index) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(index));
}
AllocatorStats gpu_allocator_stats(int index) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(index));
  return {stats.allocated_bytes[0].current, stats.allocated_bytes[0].peak, stats.reserved_bytes[0].peak};
}
#else
constexpr void (*gpu_reset_peak)(int) = nullptr;  // a CPU build has no GPU allocator to ask
constexpr AllocatorStats (*gpu_allocator_stats)(int) = nullptr;
#endif

// Each type of core/device_text.h's table with its LibTorch hooks.
const std::vector<DeviceKind>& table() {
  static const std::vector<DeviceKind> t = [] {
    std::vector<DeviceKind> v;
    for (const auto& k : device_text_kinds()) {
      const std::string name = k.name;
      if (name == "cpu") {
        v.push_back({k.name, c10::DeviceType::CPU, k.gpu, k.indexed, nullptr, nullptr, nullptr, nullptr, nullptr});
      } else if (name == "cuda") {
        v.push_back({k.name, c10::DeviceType::CUDA, k.gpu, k.indexed, gpu_available, gpu_count, gpu_synchronize,
                     gpu_reset_peak, gpu_allocator_stats});
      } else {
        throw std::logic_error("device type '" + name + "' has no LibTorch hooks in core/device.cpp");
      }
    }
    return v;
  }();
  return t;
}

// The allocator index of a device: its own, or device 0 for "the default one".
int allocator_index(const DeviceSpec& d) { return d.index < 0 ? 0 : d.index; }

}  // namespace

const std::vector<DeviceKind>& device_kinds() { return table(); }

const DeviceKind* find_device_kind(const std::string& name) {
  for (const auto& k : table())
    if (name == k.name) return &k;
  return nullptr;
}

const DeviceKind* device_kind_of(const std::string& device_text) {
  return find_device_kind(device_text.substr(0, device_text.find(':')));
}

const DeviceKind& device_kind(const DeviceSpec& d) {
  const DeviceKind* k = find_device_kind(d.type);
  if (k == nullptr) throw std::invalid_argument("unknown device '" + d.str() + "' (expected " + device_choices() + ")");
  return *k;
}

torch::Device torch_device(const DeviceSpec& d) {
  const DeviceKind& k = device_kind(d);
  if (!k.indexed) return torch::Device(k.torch_type);
  return torch::Device(k.torch_type, static_cast<c10::DeviceIndex>(allocator_index(d)));
}

std::string device_unavailable_reason(const DeviceSpec& d) {
  const DeviceKind& k = device_kind(d);
  if (k.available == nullptr) return "";  // the host is always there
  if (!k.available()) {
    return "device '" + d.str() + "' is not available: this LibTorch build or machine has no usable GPU";
  }
  const int count = k.count();
  if (d.index >= count) {
    return "device '" + d.str() + "' is not available: " + std::to_string(count) + " GPU(s) present";
  }
  return "";
}

std::string best_device() {
  for (const auto& k : table())
    if (k.gpu && k.available != nullptr && k.available()) return k.name;
  return table().front().name;
}

void synchronize(const DeviceSpec& d) {
  const DeviceKind& k = device_kind(d);
  if (k.synchronize != nullptr) k.synchronize(d.index);
}

void set_current_device(const DeviceSpec& d) {
  if (!device_kind(d).gpu) return;
  const torch::Device dev = torch_device(d);
  c10::impl::getDeviceGuardImpl(dev.type())->setDevice(dev);
}

void reset_peak_memory(const DeviceSpec& d) {
  const DeviceKind& k = device_kind(d);
  if (k.reset_peak != nullptr) k.reset_peak(allocator_index(d));
}

int64_t peak_memory_bytes(const DeviceSpec& d) {
  const DeviceKind& k = device_kind(d);
  if (k.allocator_stats != nullptr) return k.allocator_stats(allocator_index(d)).allocated_peak;
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

int64_t allocated_bytes(const DeviceSpec& d) {
  const DeviceKind& k = device_kind(d);
  return k.allocator_stats != nullptr ? k.allocator_stats(allocator_index(d)).allocated_current : 0;
}

int64_t peak_reserved_bytes(const DeviceSpec& d) {
  const DeviceKind& k = device_kind(d);
  return k.allocator_stats != nullptr ? k.allocator_stats(allocator_index(d)).reserved_peak : 0;
}

bool is_rocm_build() {
#if defined(TRAINBENCH_WITH_HIP)
  return true;
#else
  return false;
#endif
}

// These at::Context setters exist in every LibTorch (1.13 to 2.x) and do nothing without a GPU
// library; only the GPU cases call them.
void configure_gpu_math(const DeviceSpec& d, bool tf32) {
  if (!d.is_gpu()) return;
  auto& ctx = at::globalContext();
  ctx.setBenchmarkCuDNN(true);  // MIOpen too: ROCm LibTorch reads the same flag for its find mode
  ctx.setAllowTF32CuBLAS(tf32);
  ctx.setAllowTF32CuDNN(tf32);
}

std::string algorithm_search_mode(const DeviceSpec& d) {
  if (!d.is_gpu() || !at::globalContext().benchmarkCuDNN()) return "none";
  return is_rocm_build() ? "miopen find" : "cudnn benchmark";
}

std::string tf32_mode(const DeviceSpec& d) {
  if (!d.is_gpu()) return "n/a";
  const auto& ctx = at::globalContext();
  return ctx.allowTF32CuBLAS() && ctx.allowTF32CuDNN()
             ? "on"
             : (ctx.allowTF32CuBLAS() || ctx.allowTF32CuDNN() ? "mixed" : "off");
}

std::string limit_gpu_memory(const DeviceSpec& d, int64_t bytes) {
  if (!d.is_gpu() || bytes <= 0) return "";
#if defined(TRAINBENCH_WITH_CUDA) && !defined(TRAINBENCH_WITH_HIP)
  if (!torch::cuda::is_available()) return "no GPU to limit";
  const int index = allocator_index(d);
  // The allocator of each device exists once LibTorch has set the GPU up: one small tensor does that.
  (void)torch::empty({1}, torch::TensorOptions().device(torch::Device(c10::DeviceType::CUDA, index)));
  const auto total = static_cast<double>(at::cuda::getDeviceProperties(index)->totalGlobalMem);
  c10::cuda::CUDACachingAllocator::setMemoryFraction(std::min(1.0, static_cast<double>(bytes) / total),
                                                     static_cast<c10::DeviceIndex>(index));
  return "";
#else
  return "a memory limit on this build's GPUs is not supported (CUDA builds only)";
#endif
}

std::optional<std::string> gpu_pci_bus_id(const DeviceSpec& d) {
#if defined(TRAINBENCH_WITH_CUDA) && !defined(TRAINBENCH_WITH_HIP)
  if (d.is_gpu() && torch::cuda::is_available()) {
    const auto* p = at::cuda::getDeviceProperties(torch_device(d).index());
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", static_cast<unsigned>(p->pciDomainID),
                  static_cast<unsigned>(p->pciBusID), static_cast<unsigned>(p->pciDeviceID));
    return std::string(buf);
  }
#endif
  (void)d;
  return std::nullopt;
}

int configure_threads(int requested) {
  const int n = requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
  return at::get_num_threads();
}

}  // namespace trainbench
