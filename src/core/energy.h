// Energy over the measured steps: a cumulative energy counter is read right before the first
// measured step and right after the last, and the difference becomes joules per sample and mean
// power. Counters: NVML's total energy of a CUDA GPU (millijoules since the driver loaded, Volta and
// newer) and, on a CPU, the Linux powercap RAPL package zones (microjoules, wrapping at
// max_energy_range_uj). The arithmetic is pure and the counter is an interface, so both are tested
// without either device (tests/core/test_energy.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device.h"

namespace trainbench {

// Units counted between two raw readings of a counter that counts from 0 up to `range` and then
// starts again from 0 (RAPL's energy_uj and max_energy_range_uj). range 0: a counter that never wraps
// (NVML's), so an end below the start means it was reset. Empty for a reset, or a reading above the
// range. At most one wrap between the readings is assumed (a RAPL package range is typically about
// 262 kJ: over 20 minutes at 200 W; a case's measured steps take seconds to a minute or two).
std::optional<uint64_t> counter_delta(uint64_t start, uint64_t end, uint64_t range);

// A cumulative energy counter of one or more domains read together (one per CPU package).
class EnergyCounter {
 public:
  virtual ~EnergyCounter() = default;
  virtual std::string source() const = 0;            // "nvml" | "rapl"
  virtual double joules_per_unit() const = 0;        // 1e-3 for mJ, 1e-6 for uJ
  virtual std::vector<uint64_t> ranges() const = 0;  // each domain's wrap range (counter_delta); 0: none
  // One raw value per domain, in ranges() order; empty when any domain could not be read.
  virtual std::optional<std::vector<uint64_t>> read() = 0;
  // The shortest window the counter measures to about 10%: some ten of its update intervals.
  virtual double min_window_s() const { return 0.0; }
};

// Joules between two readings, each domain's delta (counter_delta) summed; empty when the readings
// and the ranges do not have one value per domain each, or a domain's delta is empty.
std::optional<double> joules_between(const std::vector<uint64_t>& start, const std::vector<uint64_t>& end,
                                     const std::vector<uint64_t>& ranges, double joules_per_unit);

struct EnergyFigures {
  std::string source;         // the counter's source()
  double joules = 0.0;        // over the window
  double seconds = 0.0;       // the window
  double j_per_sample = 0.0;  // joules / samples processed in the window
  double mean_power_w = 0.0;  // joules / seconds
};

// Empty unless joules is finite and > 0 (no energy is a counter not yet updated, not 0 W), seconds > 0
// and samples > 0.
std::optional<EnergyFigures> energy_figures(const std::string& source, double joules, double seconds, int64_t samples);

// Reads a counter at start() and stop(), with a clock for the window's length.
class EnergyMeter {
 public:
  // `counter` null: no energy (figures() stays empty). `now_s`: seconds on a monotonic clock; empty:
  // std::chrono::steady_clock.
  explicit EnergyMeter(std::unique_ptr<EnergyCounter> counter, std::function<double()> now_s = nullptr);
  // NVML for a CUDA GPU, RAPL for the CPU; no counter on a ROCm GPU, without NVML, or without a
  // readable RAPL package zone (energy_uj is root-only on many kernels).
  static EnergyMeter for_device(const DeviceSpec& d);

  bool available() const { return counter_ != nullptr; }
  void start();
  void stop();
  // For the window start()..stop(), over the `samples` samples processed in it; empty without a
  // counter, when a read failed, without a whole window, or for a window shorter than the counter's
  // min_window_s().
  std::optional<EnergyFigures> figures(int64_t samples) const;

 private:
  std::unique_ptr<EnergyCounter> counter_;
  std::function<double()> now_s_;
  std::optional<std::vector<uint64_t>> start_, stop_;
  double start_s_ = 0.0, stop_s_ = 0.0;
};

// The RAPL package zones under a powercap folder: the top-level `intel-rapl:N` zones whose name starts
// with "package" (their sub-zones core/uncore/dram are parts or siblings of a package and would count
// twice or add DRAM; `intel-rapl-mmio:N` repeats a package; psys covers the whole platform). Null when
// there is no package zone, or one whose energy_uj or max_energy_range_uj cannot be read (a sum
// without it would be too small). AMD CPUs report here too.
std::unique_ptr<EnergyCounter> rapl_energy_counter(const std::string& powercap_dir = "/sys/class/powercap");

}  // namespace trainbench
