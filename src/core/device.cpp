#include "core/device.h"

#include <sys/resource.h>

#include <stdexcept>
#include <thread>

#if defined(TRAINBENCH_WITH_CUDA) || defined(TRAINBENCH_WITH_HIP)
#include <c10/cuda/CUDACachingAllocator.h>
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

void reset_peak_memory(const DeviceSpec& d) {
#if defined(TRAINBENCH_WITH_CUDA) || defined(TRAINBENCH_WITH_HIP)
  if (d.is_gpu()) c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<int>(d.torch_device().index()));
#else
  (void)d;
#endif
}

int64_t peak_memory_bytes(const DeviceSpec& d) {
#if defined(TRAINBENCH_WITH_CUDA) || defined(TRAINBENCH_WITH_HIP)
  if (d.is_gpu()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<int>(d.torch_device().index()));
    return stats.allocated_bytes[static_cast<size_t>(c10::cuda::CUDACachingAllocator::StatType::AGGREGATE)].peak;
  }
#endif
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

int configure_threads(int requested) {
  const int n = requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
  return at::get_num_threads();
}

}  // namespace trainbench
