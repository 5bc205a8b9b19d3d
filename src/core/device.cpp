#include "core/device.h"

#include <sys/resource.h>

#include <stdexcept>
#include <thread>

#include <ATen/Context.h>

#if defined(TRAINBENCH_WITH_CUDA) || defined(TRAINBENCH_WITH_HIP)
#include <c10/cuda/CUDACachingAllocator.h>
#endif
#if defined(TRAINBENCH_WITH_CUDA) && !defined(TRAINBENCH_WITH_HIP)
#include <ATen/cuda/CUDAContext.h>
#include <cstdio>
#endif

namespace trainbench {

std::string DeviceSpec::str() const { return index < 0 ? type : type + ":" + std::to_string(index); }

torch::Device DeviceSpec::torch_device() const {
  if (type == "cpu") return torch::Device(torch::kCPU);
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index < 0 ? 0 : index));
}

DeviceSpec parse_device(const std::string& text) {
  DeviceSpec d;
  const auto colon = text.find(':');
  d.type = text.substr(0, colon);
  if (d.type != "cpu" && d.type != "cuda") {
    throw std::invalid_argument("unknown device '" + text + "' (expected cpu, cuda or cuda:N)");
  }
  if (colon != std::string::npos) {
    const std::string idx = text.substr(colon + 1);
    if (d.type == "cpu" || idx.empty() || idx.size() > 3 || idx.find_first_not_of("0123456789") != std::string::npos) {
      throw std::invalid_argument("bad device '" + text + "' (expected cpu, cuda or cuda:N)");
    }
    d.index = std::stoi(idx);
  }
  return d;
}

std::string device_unavailable_reason(const DeviceSpec& d) {
  if (d.type == "cpu") return "";
  if (!torch::cuda::is_available()) {
    return "device '" + d.str() + "' is not available: this LibTorch build or machine has no usable GPU";
  }
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (d.index >= count) {
    return "device '" + d.str() + "' is not available: " + std::to_string(count) + " GPU(s) present";
  }
  return "";
}

std::string best_device() { return torch::cuda::is_available() ? "cuda" : "cpu"; }

void synchronize(const DeviceSpec& d) {
  if (d.is_gpu()) torch::cuda::synchronize(d.index);
}

// GPU allocator statistics: index 0 of each stat array is the aggregate over pools in every LibTorch
// (StatType::AGGREGATE moved namespaces in 2.x, so the index is spelled out); getDeviceStats took an
// int in 1.13 and takes a c10::DeviceIndex in 2.x, which converts either way.
void reset_peak_memory(const DeviceSpec& d) {
#if defined(TRAINBENCH_WITH_CUDA) || defined(TRAINBENCH_WITH_HIP)
  if (d.is_gpu()) c10::cuda::CUDACachingAllocator::resetPeakStats(d.torch_device().index());
#else
  (void)d;
#endif
}

int64_t peak_memory_bytes(const DeviceSpec& d) {
#if defined(TRAINBENCH_WITH_CUDA) || defined(TRAINBENCH_WITH_HIP)
  if (d.is_gpu()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(d.torch_device().index());
    return stats.allocated_bytes[0].peak;
  }
#endif
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

int64_t peak_reserved_bytes(const DeviceSpec& d) {
#if defined(TRAINBENCH_WITH_CUDA) || defined(TRAINBENCH_WITH_HIP)
  if (d.is_gpu()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(d.torch_device().index());
    return stats.reserved_bytes[0].peak;
  }
#endif
  (void)d;
  return 0;
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
  return ctx.allowTF32CuBLAS() && ctx.allowTF32CuDNN() ? "on" : (ctx.allowTF32CuBLAS() || ctx.allowTF32CuDNN() ? "mixed" : "off");
}

std::optional<std::string> gpu_pci_bus_id(const DeviceSpec& d) {
#if defined(TRAINBENCH_WITH_CUDA) && !defined(TRAINBENCH_WITH_HIP)
  if (d.is_gpu() && torch::cuda::is_available()) {
    const auto* p = at::cuda::getDeviceProperties(d.torch_device().index());
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
