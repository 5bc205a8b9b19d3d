#include "core/energy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "core/gpu_clock.h"

namespace trainbench {

std::optional<uint64_t> counter_delta(uint64_t start, uint64_t end, uint64_t range) {
  if (range == 0) {
    if (end < start) return {};
    return end - start;
  }
  if (start > range || end > range) return {};
  // After the wrap the counter went from `start` up to `range`, then from 0 to `end`.
  return end >= start ? end - start : (range - start) + end;
}

std::optional<double> joules_between(const std::vector<uint64_t>& start, const std::vector<uint64_t>& end,
                                     const std::vector<uint64_t>& ranges, double joules_per_unit) {
  if (start.empty() || start.size() != end.size() || start.size() != ranges.size()) return {};
  double units = 0.0;
  for (size_t i = 0; i < start.size(); ++i) {
    const auto d = counter_delta(start[i], end[i], ranges[i]);
    if (!d) return {};
    units += static_cast<double>(*d);
  }
  return units * joules_per_unit;
}

std::optional<EnergyFigures> energy_figures(const std::string& source, double joules, double seconds, int64_t samples) {
  // No energy over a window is a counter not yet updated (the window was shorter than its update
  // interval), not a device drawing 0 W: no figure.
  if (!std::isfinite(joules) || joules <= 0.0 || !std::isfinite(seconds) || seconds <= 0.0 || samples <= 0) return {};
  EnergyFigures f;
  f.source = source;
  f.joules = joules;
  f.seconds = seconds;
  f.j_per_sample = joules / static_cast<double>(samples);
  f.mean_power_w = joules / seconds;
  return f;
}

EnergyMeter::EnergyMeter(std::unique_ptr<EnergyCounter> counter, std::function<double()> now_s)
    : counter_(std::move(counter)), now_s_(std::move(now_s)) {
  if (!now_s_) {
    now_s_ = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  }
}

void EnergyMeter::start() {
  stop_.reset();
  if (!counter_) return;
  start_ = counter_->read();
  start_s_ = now_s_();
}

void EnergyMeter::stop() {
  if (!counter_ || !start_) return;
  stop_s_ = now_s_();
  stop_ = counter_->read();
}

std::optional<EnergyFigures> EnergyMeter::figures(int64_t samples) const {
  if (!counter_ || !start_ || !stop_ || stop_s_ - start_s_ < counter_->min_window_s()) return {};
  const auto joules = joules_between(*start_, *stop_, counter_->ranges(), counter_->joules_per_unit());
  if (!joules) return {};
  return energy_figures(counter_->source(), *joules, stop_s_ - start_s_, samples);
}

namespace {

// NVML's total energy of one GPU: a 64-bit millijoule count since the driver loaded.
class NvmlEnergyCounter : public EnergyCounter {
 public:
  explicit NvmlEnergyCounter(NvmlDevice gpu) : gpu_(std::move(gpu)) {}
  std::string source() const override { return "nvml"; }
  // NVML refreshes the counter about every 100 ms: on an H100, 47 ms windows read 0 J or a whole
  // update (a 36 ms window read 742 W on a 700 W card).
  double min_window_s() const override { return 1.0; }
  double joules_per_unit() const override { return 1e-3; }
  std::vector<uint64_t> ranges() const override { return {0}; }
  std::optional<std::vector<uint64_t>> read() override {
    const auto mj = gpu_.library->total_energy_mj(gpu_.device);
    if (!mj) return {};
    return std::vector<uint64_t>{*mj};
  }

 private:
  NvmlDevice gpu_;
};

std::optional<uint64_t> read_u64(const std::filesystem::path& p) {
  std::ifstream in(p);
  uint64_t v = 0;
  if (!(in >> v)) return {};
  return v;
}

std::string read_word(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  in >> s;
  return s;
}

// The package zones' energy_uj files, each wrapping at its own max_energy_range_uj.
class RaplEnergyCounter : public EnergyCounter {
 public:
  RaplEnergyCounter(std::vector<std::filesystem::path> files, std::vector<uint64_t> ranges)
      : files_(std::move(files)), ranges_(std::move(ranges)) {}
  std::string source() const override { return "rapl"; }
  double joules_per_unit() const override { return 1e-6; }
  std::vector<uint64_t> ranges() const override { return ranges_; }
  std::optional<std::vector<uint64_t>> read() override {
    std::vector<uint64_t> v;
    v.reserve(files_.size());
    for (const auto& f : files_) {
      const auto uj = read_u64(f);
      if (!uj) return {};
      v.push_back(*uj);
    }
    return v;
  }

 private:
  std::vector<std::filesystem::path> files_;
  std::vector<uint64_t> ranges_;
};

// Null when this GPU has no NVML energy counter (before Volta, ROCm, no NVML).
std::unique_ptr<EnergyCounter> nvml_energy_counter(const DeviceSpec& d) {
  auto gpu = open_nvml_device(d);
  if (!gpu || !gpu->library->total_energy_mj(gpu->device)) return nullptr;
  return std::make_unique<NvmlEnergyCounter>(std::move(*gpu));
}

}  // namespace

std::unique_ptr<EnergyCounter> rapl_energy_counter(const std::string& powercap_dir) {
  namespace fs = std::filesystem;
  static const std::regex top_level_zone(R"(intel-rapl:[0-9]+)");
  std::error_code ec;
  std::vector<fs::path> zones;
  for (fs::directory_iterator it(powercap_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (std::regex_match(it->path().filename().string(), top_level_zone)) zones.push_back(it->path());
  }
  std::sort(zones.begin(), zones.end());  // package-0 first: a stable domain order
  std::vector<fs::path> files;
  std::vector<uint64_t> ranges;
  for (const auto& z : zones) {
    if (read_word(z / "name").rfind("package", 0) != 0) continue;
    // One package unreadable would undercount the others' sum: then no figure at all.
    const auto range = read_u64(z / "max_energy_range_uj");
    if (!range || *range == 0 || !read_u64(z / "energy_uj")) return nullptr;
    files.push_back(z / "energy_uj");
    ranges.push_back(*range);
  }
  if (files.empty()) return nullptr;
  return std::make_unique<RaplEnergyCounter>(std::move(files), std::move(ranges));
}

EnergyMeter EnergyMeter::for_device(const DeviceSpec& d) {
  if (d.is_gpu()) return EnergyMeter(nvml_energy_counter(d));
  return EnergyMeter(rapl_energy_counter());
}

}  // namespace trainbench
