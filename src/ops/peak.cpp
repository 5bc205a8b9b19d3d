#include "ops/peak.h"

#include <torch/torch.h>
#include <torch/version.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "core/precision.h"
#include "ops/op_timer.h"
#include "results/context.h"
#include "runner/measure.h"

namespace trainbench {
namespace {

using Clock = std::chrono::steady_clock;

// Median seconds of `fn` under the stopping rule (each call synchronised).
double median_time(const DeviceSpec& device, const MeasureSettings& m, const std::function<void()>& fn) {
  synchronize(device);
  return summarize(sample_until_done(m,
                                     [&] {
                                       const auto t0 = Clock::now();
                                       fn();
                                       synchronize(device);
                                       return std::chrono::duration<double>(Clock::now() - t0).count();
                                     })
                       .samples)
      .median;
}

}  // namespace

// The op timer's rule, each measurement given longer: a ceiling is one number that many others divide by.
MeasureSettings default_peak_measure() {
  MeasureSettings m = default_op_measure();
  m.min_time_s = 0.5;
  return m;
}

PeakInfo measure_peak(const PeakSettings& s, const std::string& device_name, int threads) {
  PeakInfo p;
  p.device = s.device.str();
  p.device_name = device_name;
  p.threads = threads;
  p.libtorch_version = TORCH_VERSION;
  p.measured_at = iso8601_utc_now();
  const bool gpu = s.device.is_gpu();
  p.gemm_size = s.gemm_size > 0 ? s.gemm_size : (gpu ? 8192 : 2048);
  p.copy_bytes = s.copy_bytes > 0 ? s.copy_bytes : (gpu ? (int64_t{2} << 30) : (int64_t{256} << 20));
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  const auto dev = torch_device(s.device);

  auto gemm = [&](const std::string& precision, const std::string& as) {
    try {
      const auto opts = torch::TensorOptions().device(dev).dtype(torch_dtype(parse_precision(precision)));
      const int64_t n = p.gemm_size;
      auto a = torch::randn({n, n}, opts), b = torch::randn({n, n}, opts), c = torch::empty({n, n}, opts);
      const double t = median_time(s.device, s.measure, [&] { torch::mm_out(c, a, b); });
      p.gemm_gflops[as] = 2.0 * static_cast<double>(n) * n * n / t / 1e9;
    } catch (...) {
      p.gemm_unsupported[as] = current_failure().line;
    }
  };
  for (const auto& precision : s.precisions) gemm(precision, precision);
  // On a GPU an fp32 case with --tf32 on multiplies on TF32 tensor cores: its ceiling is the fp32 GEMM
  // with TF32 allowed, measured here as "tf32" (the math settings as they were are put back).
  if (gpu && std::find(s.precisions.begin(), s.precisions.end(), "fp32") != s.precisions.end()) {
    const bool was_on = tf32_mode(s.device) == "on";
    configure_gpu_math(s.device, true);
    gemm("fp32", "tf32");
    configure_gpu_math(s.device, was_on);
  }

  {
    const int64_t floats = p.copy_bytes / 4;
    auto src = torch::randn({floats}, torch::TensorOptions().device(dev));
    auto dst = torch::empty_like(src);
    const double t = median_time(s.device, s.measure, [&] { dst.copy_(src); });
    p.copy_gbps = 2.0 * static_cast<double>(floats) * 4.0 / t / 1e9;  // read + write
  }

  {
    // A 3x3 convolution as a ResNet stage runs it; sized so one call is long enough to time.
    const OpDescriptor conv = parse_op(gpu ? "conv:mb64ic256ih56oc256kh3ph1" : "conv:mb16ic128ih28oc128kh3ph1");
    p.conv_op = conv.str();
    auto x = torch::randn({conv.get("mb"), conv.get("ic"), conv.get("ih"), conv.get("iw")},
                          torch::TensorOptions().device(dev));
    auto w = torch::randn({conv.get("oc"), conv.get("ic"), conv.get("kh"), conv.get("kw")},
                          torch::TensorOptions().device(dev));
    const double t = median_time(s.device, s.measure, [&] { (void)torch::conv2d(x, w, {}, 1, 1); });
    p.conv_gflops = conv.flops(OpPhase::fwd) / t / 1e9;
  }
  return p;
}

std::string peak_cache_path() {
  namespace fs = std::filesystem;
  if (const char* d = std::getenv("TRAINBENCH_CACHE_DIR"); d != nullptr && *d != '\0')
    return (fs::path(d) / "peak.json").string();
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d != nullptr && *d != '\0')
    return (fs::path(d) / "trainbench" / "peak.json").string();
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return (fs::path(home) / ".cache" / "trainbench" / "peak.json").string();
  static bool said = false;
  if (!said) {
    said = true;
    std::cerr << "trainbench: note: neither HOME nor XDG_CACHE_HOME is set: the peak cache is not used\n";
  }
  return "";
}

namespace {

std::vector<PeakInfo> read_cache(const std::string& path) {
  if (path.empty()) return {};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  if (st.st_uid != ::geteuid() || !S_ISREG(st.st_mode)) {
    static bool said = false;
    if (!said) {
      said = true;
      std::cerr << "trainbench: warning: ignoring the peak cache " << path
                << ": not a regular file owned by this user\n";
    }
    return {};
  }
  std::ifstream in(path);
  if (!in) return {};
  std::vector<PeakInfo> entries;
  try {
    const auto j = nlohmann::json::parse(in);
    for (const auto& e : j.at("entries")) entries.push_back(peak_info_from_json(e));
  } catch (const std::exception&) {
    return {};  // a damaged cache is an empty one; `trainbench peak` rewrites it
  }
  return entries;
}

bool same_key(const PeakInfo& a, const PeakInfo& b) {
  return a.device == b.device && a.device_name == b.device_name && a.threads == b.threads &&
         a.libtorch_version == b.libtorch_version;
}

}  // namespace

std::optional<PeakInfo> find_cached_peak(const std::string& device, const std::string& device_name, int threads,
                                         const std::string& libtorch_version) {
  PeakInfo key;
  key.device = device;
  key.device_name = device_name;
  key.threads = threads;
  key.libtorch_version = libtorch_version;
  for (const auto& e : read_cache(peak_cache_path()))
    if (same_key(e, key)) return e;
  return std::nullopt;
}

bool store_peak(const PeakInfo& p) {
  namespace fs = std::filesystem;
  const std::string path = peak_cache_path();
  if (path.empty()) return false;
  std::vector<PeakInfo> entries = read_cache(path);
  bool replaced = false;
  for (auto& e : entries) {
    if (same_key(e, p)) {
      e = p;
      replaced = true;
    }
  }
  if (!replaced) entries.push_back(p);
  nlohmann::json j = {{"schema_version", 1}, {"entries", nlohmann::json::array()}};
  for (const auto& e : entries) j["entries"].push_back(to_json(e));
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out) throw std::runtime_error(path + ": cannot write the peak cache");
  }
  fs::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(path + ": cannot write the peak cache: " + ec.message());
  return true;
}

void add_percent_of_peak(Record& r, const Context& context) {
  if (!r.ok() || !(r.achieved_gflops > 0.0)) return;
  const auto peak = find_cached_peak(r.device, context.device_name, r.threads, context.libtorch_version);
  if (!peak) return;
  // A data-parallel record's FLOP/s are the job's, over world_size devices: the ceiling is as many
  // times this device's (every rank is taken to have rank 0's device, as the launch expects).
  const double devices = r.dist ? std::max(1, r.dist->world_size) : 1;
  const double g = devices * peak->peak_for(r.precision, r.tf32);
  if (!(std::isfinite(g) && g > 0.0)) return;
  r.percent_of_peak = 100.0 * r.achieved_gflops / g;
  // MFU / HFU (language models): model and hardware FLOP/s over the same peak, as fractions.
  const double median = r.step_time_s.median;
  if (r.model_flops_per_step > 0.0 && median > 0.0) r.mfu = r.model_flops_per_step / median / 1e9 / g;
  if (r.hardware_flops_per_step > 0.0 && median > 0.0) r.hfu = r.hardware_flops_per_step / median / 1e9 / g;
}

}  // namespace trainbench
