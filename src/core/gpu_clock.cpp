#include "core/gpu_clock.h"

#include <dlfcn.h>

#include "core/detail/nvml_api.h"

namespace trainbench {

namespace {

namespace nvml = detail::nvml;
constexpr nvml::ClockType kNvmlClockSm = nvml::kClockSm;
constexpr nvml::Return kNvmlSuccess = nvml::kSuccess;
using NvmlReturn = nvml::Return;

template <class F>
F symbol(void* handle, const char* name) {
  return reinterpret_cast<F>(dlsym(handle, name));
}

}  // namespace

struct NvmlLibrary::Api {
  nvml::InitFn init = nullptr;
  nvml::ShutdownFn shutdown = nullptr;
  nvml::HandleByIndexFn by_index = nullptr;
  nvml::HandleByPciBusIdFn by_pci = nullptr;
  nvml::ClockFn clock = nullptr;
  nvml::ClockFn default_clock = nullptr;
  nvml::ClockFn max_clock = nullptr;
  nvml::DriverVersionFn driver = nullptr;
  nvml::TotalEnergyFn total_energy = nullptr;
};

NvmlLibrary::NvmlLibrary(const std::string& soname) : api_(std::make_unique<Api>()) {
  handle_ = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    reason_ = soname + " not present";
    return;
  }
  api_->init = symbol<decltype(api_->init)>(handle_, "nvmlInit_v2");
  api_->shutdown = symbol<decltype(api_->shutdown)>(handle_, "nvmlShutdown");
  api_->by_index = symbol<decltype(api_->by_index)>(handle_, "nvmlDeviceGetHandleByIndex_v2");
  api_->by_pci = symbol<decltype(api_->by_pci)>(handle_, "nvmlDeviceGetHandleByPciBusId_v2");
  api_->clock = symbol<decltype(api_->clock)>(handle_, "nvmlDeviceGetClockInfo");
  api_->default_clock = symbol<decltype(api_->default_clock)>(handle_, "nvmlDeviceGetDefaultApplicationsClock");
  api_->max_clock = symbol<decltype(api_->max_clock)>(handle_, "nvmlDeviceGetMaxClockInfo");
  api_->driver = symbol<decltype(api_->driver)>(handle_, "nvmlSystemGetDriverVersion");
  api_->total_energy = symbol<decltype(api_->total_energy)>(handle_, "nvmlDeviceGetTotalEnergyConsumption");
  if (api_->init == nullptr || api_->shutdown == nullptr || api_->by_index == nullptr || api_->clock == nullptr) {
    reason_ = soname + " lacks the NVML functions needed (nvmlInit_v2, nvmlDeviceGetClockInfo, ...)";
    return;
  }
  if (const NvmlReturn rc = api_->init(); rc != kNvmlSuccess) {
    reason_ = "nvmlInit_v2 failed (NVML error " + std::to_string(rc) + ")";
    return;
  }
  initialized_ = true;
}

NvmlLibrary::~NvmlLibrary() {
  if (initialized_) api_->shutdown();
  if (handle_ != nullptr) dlclose(handle_);
}

void* NvmlLibrary::device_by_pci_bus_id(const std::string& bus_id) const {
  nvml::Device d = nullptr;
  if (!initialized_ || api_->by_pci == nullptr || api_->by_pci(bus_id.c_str(), &d) != kNvmlSuccess) return nullptr;
  return d;
}

void* NvmlLibrary::device_by_index(unsigned index) const {
  nvml::Device d = nullptr;
  if (!initialized_ || api_->by_index(index, &d) != kNvmlSuccess) return nullptr;
  return d;
}

std::optional<double> NvmlLibrary::sm_clock_mhz(void* device) const {
  unsigned mhz = 0;
  if (!initialized_ || device == nullptr || api_->clock(device, kNvmlClockSm, &mhz) != kNvmlSuccess) return {};
  return static_cast<double>(mhz);
}

std::optional<double> NvmlLibrary::default_sm_clock_mhz(void* device) const {
  if (!initialized_ || device == nullptr) return {};
  unsigned mhz = 0;
  if (api_->default_clock != nullptr && api_->default_clock(device, kNvmlClockSm, &mhz) == kNvmlSuccess && mhz > 0)
    return static_cast<double>(mhz);
  if (api_->max_clock != nullptr && api_->max_clock(device, kNvmlClockSm, &mhz) == kNvmlSuccess && mhz > 0)
    return static_cast<double>(mhz);
  return {};
}

std::optional<uint64_t> NvmlLibrary::total_energy_mj(void* device) const {
  unsigned long long mj = 0;
  if (!initialized_ || device == nullptr || api_->total_energy == nullptr ||
      api_->total_energy(device, &mj) != kNvmlSuccess)
    return {};
  return static_cast<uint64_t>(mj);
}

std::optional<std::string> NvmlLibrary::driver_version() const {
  char buf[96] = {};
  if (!initialized_ || api_->driver == nullptr || api_->driver(buf, sizeof buf) != kNvmlSuccess) return {};
  return std::string(buf);
}

ClockFilter::ClockFilter(std::optional<double> default_mhz, double min_fraction) {
  if (default_mhz && *default_mhz > 0) threshold_mhz_ = *default_mhz * min_fraction;
}

bool ClockFilter::keep(std::optional<double> clock_mhz) {
  if (!clock_mhz) return true;
  if (threshold_mhz_ && *clock_mhz < *threshold_mhz_) {
    ++dropped_;
    return false;
  }
  kept_sum_ += *clock_mhz;
  ++kept_n_;
  return true;
}

std::optional<double> ClockFilter::mean_kept_mhz() const {
  if (kept_n_ == 0) return {};
  return kept_sum_ / static_cast<double>(kept_n_);
}

SmClockReader::SmClockReader(std::function<std::optional<double>()> read, std::optional<double> default_mhz)
    : read_(std::move(read)), default_mhz_(default_mhz) {}

std::optional<NvmlDevice> open_nvml_device(const DeviceSpec& d) {
  if (!d.is_gpu() || is_rocm_build()) return {};
  auto nvml = std::make_shared<NvmlLibrary>();
  if (!nvml->available()) return {};
  void* dev = nullptr;
  if (const auto bus = gpu_pci_bus_id(d)) dev = nvml->device_by_pci_bus_id(*bus);
  if (dev == nullptr) dev = nvml->device_by_index(static_cast<unsigned>(d.index < 0 ? 0 : d.index));
  if (dev == nullptr) return {};
  return NvmlDevice{nvml, dev};
}

std::unique_ptr<SmClockReader> SmClockReader::for_device(const DeviceSpec& d) {
  const auto gpu = open_nvml_device(d);
  if (!gpu) return std::make_unique<SmClockReader>(nullptr, std::nullopt);
  auto reader = std::make_unique<SmClockReader>([gpu] { return gpu->library->sm_clock_mhz(gpu->device); },
                                                gpu->library->default_sm_clock_mhz(gpu->device));
  reader->nvml_ = gpu->library;
  return reader;
}

std::optional<std::string> nvidia_driver_version() {
  if (is_rocm_build()) return {};
  const NvmlLibrary nvml;
  return nvml.driver_version();
}

}  // namespace trainbench
