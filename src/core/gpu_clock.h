// GPU clock throttling (nvbench's idea): read the SM clock after every measured step and drop the
// steps that ran below 75% of the GPU's default clock, counting them. NVML (libnvidia-ml.so.1) is
// opened at run time with dlopen, so every build compiles this and a machine without it simply has no
// clock readings. ROCm SMI is not read yet: ROCm GPUs report no clock.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/device.h"

namespace trainbench {

// The few NVML calls used, resolved from the shared library at run time (no NVML header needed).
// The function types are in core/detail/nvml_api.h, checked against nvml.h by the CUDA compile check.
class NvmlLibrary {
 public:
  // Opens `soname` and calls nvmlInit_v2. available() says whether both worked; reason() why not.
  explicit NvmlLibrary(const std::string& soname = "libnvidia-ml.so.1");
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  bool available() const { return initialized_; }
  const std::string& reason() const { return reason_; }

  // A GPU by PCI bus id ("0000:3b:00.0", preferred: NVML and CUDA may number GPUs differently) or
  // by NVML index. nullptr when not found.
  void* device_by_pci_bus_id(const std::string& bus_id) const;
  void* device_by_index(unsigned index) const;
  std::optional<double> sm_clock_mhz(void* device) const;
  // The default applications SM clock, else the maximum SM clock.
  std::optional<double> default_sm_clock_mhz(void* device) const;
  std::optional<std::string> driver_version() const;
  // Energy the GPU used since the driver loaded, in millijoules (Volta and newer); empty when not supported.
  std::optional<uint64_t> total_energy_mj(void* device) const;

 private:
  struct Api;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  bool initialized_ = false;
  std::string reason_;
};

// One GPU as NVML knows it, with the library kept open as long as the handle is used.
struct NvmlDevice {
  std::shared_ptr<NvmlLibrary> library;
  void* device = nullptr;
};
// The NVML device of a CUDA GPU (by PCI bus id, else by index); empty on a CPU, a ROCm build, or without NVML.
std::optional<NvmlDevice> open_nvml_device(const DeviceSpec& d);

// Keeps or drops each measured step by the SM clock read right after it.
class ClockFilter {
 public:
  // `default_mhz` empty: the clock cannot be judged and every sample is kept.
  explicit ClockFilter(std::optional<double> default_mhz, double min_fraction = 0.75);
  // True when the step counts: its clock is unknown or at least min_fraction of the default.
  bool keep(std::optional<double> clock_mhz);
  int64_t dropped() const { return dropped_; }
  // Mean clock of the kept samples that had a reading; empty when none had one.
  std::optional<double> mean_kept_mhz() const;

 private:
  std::optional<double> threshold_mhz_;
  double kept_sum_ = 0.0;
  int64_t kept_n_ = 0;
  int64_t dropped_ = 0;
};

// Reads one GPU's SM clock. On a CPU, a ROCm build, or without NVML, read() always gives nothing.
class SmClockReader {
 public:
  static std::unique_ptr<SmClockReader> for_device(const DeviceSpec& d);
  // For tests: readings from a function, and a fixed default clock.
  SmClockReader(std::function<std::optional<double>()> read, std::optional<double> default_mhz);
  std::optional<double> read() const { return read_ ? read_() : std::nullopt; }
  std::optional<double> default_mhz() const { return default_mhz_; }

 private:
  std::shared_ptr<NvmlLibrary> nvml_;  // keeps the library open while read_ uses it
  std::function<std::optional<double>()> read_;
  std::optional<double> default_mhz_;
};

// The driver version NVML reports ("550.54.15"); empty without NVML.
std::optional<std::string> nvidia_driver_version();

}  // namespace trainbench
