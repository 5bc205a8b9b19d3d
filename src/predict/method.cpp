#include "predict/method.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "predict/gpu_memory.h"

namespace trainbench::predict {
namespace {

constexpr double kTile = 128.0;  // a product's output tile, each side (wave_fill)

double bytes_of(const CensusOp& o, double act_bytes, double weight_bytes) {
  return o.act_elems * act_bytes + o.weight_elems * weight_bytes + o.other_bytes;
}

PhaseTime phase_time(double flops, double peak_flops_s, double efficiency, double bytes, double bandwidth_bytes_s,
                     int kernels, const Constants& k) {
  const double compute = flops > 0.0 ? flops / (peak_flops_s * efficiency) : 0.0;
  const double memory = bytes / bandwidth_bytes_s;
  const double floor = static_cast<double>(std::max(kernels, 1)) * k.kernel_floor_s;
  if (compute >= memory && compute >= floor) return {compute, Bound::compute};
  if (memory >= floor) return {memory, Bound::memory};
  return {floor, Bound::floor};
}

bool is_pure(const std::string& precision) {
  return precision.size() > 5 && precision.substr(precision.size() - 5) == "-pure";
}
bool autocast16(const std::string& precision) { return precision == "fp16" || precision == "bf16"; }

// Bytes per parameter and kernels per parameter tensor of LibTorch's C++ optimizers, one kernel per
// tensor operation of their update (docs/prediction.md): sgd p.add_(g); momentum buf.mul_().add_(g),
// p.add_(buf); adam m.mul_().add_(), v.mul_().addcmul_(), sqrt, div, add_(eps), p.addcdiv_(); adamw one
// more p.mul_() for the decoupled decay. Each operation reads its operands and writes its result.
struct UpdateCost {
  double bytes_per_param;  // at 4 bytes an element (fp32 parameters and state)
  int kernels_per_tensor;
};
UpdateCost update_cost(const std::string& optimizer) {
  if (optimizer == "momentum") return {4.0 * (2 + 3 + 3), 3};
  if (optimizer == "adam") return {4.0 * (2 + 3 + 2 + 4 + 2 + 2 + 2 + 4), 8};
  if (optimizer == "adamw") return {4.0 * (2 + 2 + 3 + 2 + 4 + 2 + 2 + 2 + 4), 9};
  return {4.0 * 3, 1};  // sgd
}

double check_fraction(const nlohmann::json& j, const char* key, bool zero_ok, double hi) {
  if (!j.contains(key) || !j.at(key).is_number())
    throw std::runtime_error(fmt::format("field \"{}\": missing or not a number", key));
  const double v = j.at(key).get<double>();
  if (!std::isfinite(v) || v < 0.0 || (!zero_ok && v == 0.0) || v > hi)
    throw std::runtime_error(fmt::format("field \"{}\": {} out of range", key, v));
  return v;
}

}  // namespace

const Constants& fitted_constants() {
  // Fitted by bench/fit_predict.py on the fit part of bench/data/published-training.csv and the H100's
  // own measurements (docs/prediction.md, "Fitted constants").
  // python3 bench/fit_predict.py --exe build/debian/trainbench (2026-12-07; its output, rounded to 3 digits).
  static const Constants k{"2026-12-07", 0.7, 0.784, 0.56, 0.5, 0.357, 2.8e-6, 17.5e-6, 1.151, 0.35, 0.175};
  return k;
}

Constants constants_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::runtime_error("constants: a JSON object");
  Constants k;
  if (!j.contains("version") || !j.at("version").is_string()) throw std::runtime_error("field \"version\": missing");
  k.version = j.at("version").get<std::string>();
  k.conv_efficiency = check_fraction(j, "conv_efficiency", false, 1.0);
  k.matmul_efficiency = check_fraction(j, "matmul_efficiency", false, 1.0);
  k.conv_tensor_efficiency = check_fraction(j, "conv_tensor_efficiency", false, 1.0);
  k.matmul_tensor_efficiency = check_fraction(j, "matmul_tensor_efficiency", false, 1.0);
  k.memory_efficiency = check_fraction(j, "memory_efficiency", false, 1.0);
  k.kernel_floor_s = check_fraction(j, "kernel_floor_s", true, 0.999);
  k.host_per_kernel_s = check_fraction(j, "host_per_kernel_s", true, 0.999);
  k.autocast_memory_factor = check_fraction(j, "autocast_memory_factor", false, 4.0);
  k.interval = check_fraction(j, "interval", true, 0.999);
  k.profile_interval = check_fraction(j, "profile_interval", true, 0.999);
  return k;
}

nlohmann::json to_json(const Constants& k) {
  return {{"version", k.version},
          {"conv_efficiency", k.conv_efficiency},
          {"matmul_efficiency", k.matmul_efficiency},
          {"conv_tensor_efficiency", k.conv_tensor_efficiency},
          {"matmul_tensor_efficiency", k.matmul_tensor_efficiency},
          {"memory_efficiency", k.memory_efficiency},
          {"kernel_floor_s", k.kernel_floor_s},
          {"host_per_kernel_s", k.host_per_kernel_s},
          {"autocast_memory_factor", k.autocast_memory_factor},
          {"interval", k.interval},
          {"profile_interval", k.profile_interval}};
}

double element_bytes(const std::string& precision) { return precision == "fp32" ? 4.0 : 2.0; }

PeakChoice peak_for(const DeviceSpec& d, const std::string& precision, bool tf32) {
  const auto fallback = [&](const char* what) {
    return PeakChoice{
        d.fp32_tflops, false, "fp32",
        fmt::format("{} has no {} tensor cores in the catalogue: predicted on its fp32 figure", d.id, what)};
  };
  if (precision == "fp32") {
    if (!tf32) return {d.fp32_tflops, false, "fp32", ""};
    if (d.tf32_tflops) return {*d.tf32_tflops, true, "tf32 tensor", ""};
    return fallback("tf32");
  }
  const bool bf16 = precision.rfind("bf16", 0) == 0;
  const auto& figure = bf16 ? d.bf16_tflops : d.fp16_tflops;
  if (figure) return {*figure, true, bf16 ? "bf16 tensor" : "fp16 tensor", ""};
  return fallback(bf16 ? "bf16" : "fp16");
}

double wave_fill(double m, double n, double batch, int64_t compute_units) {
  const double tiles = std::ceil(m / kTile) * std::ceil(n / kTile) * std::max(1.0, batch);
  if (!(tiles > 0.0) || compute_units <= 0) return 1.0;
  const double units = static_cast<double>(compute_units);
  return tiles / (std::ceil(tiles / units) * units);
}

std::vector<OpPhaseTime> op_times(const StepCensus& census, const std::vector<CensusOp>& ops, const Card& card,
                                  const Request& r, const Constants& k) {
  const double peak = card.peak.tflops * 1e12;
  const double bandwidth = card.spec.memory_gbps * 1e9 * k.memory_efficiency;
  const double act = element_bytes(r.precision);
  // Products read their weights in the precision's type (autocast reads its casts); normalisation keeps fp32.
  const double weight_product = act, weight_other = is_pure(r.precision) ? 2.0 : 4.0;
  std::vector<OpPhaseTime> out;
  for (size_t i = 0; i < ops.size(); ++i) {
    const CensusOp& o = ops[i];
    const int index = static_cast<int>(i);
    if (o.op_class == OpClass::memory) {
      const double fwd = bytes_of(o, act, weight_other);
      out.push_back({index, 0, o.label, o.op_class, phase_time(0, peak, 1, fwd, bandwidth, o.kernels, k), o.kernels});
      if (o.has_backward && o.bwd_elems > 0.0) {
        // An embedding's gradient is the whole table in fp32; other operators' in the activations' type.
        const double per = o.name == "aten::embedding" ? 4.0 : act;
        out.push_back({index, 1, o.label, o.op_class,
                       phase_time(0, peak, 1, o.bwd_elems * per + o.other_bytes, bandwidth, o.kernels, k), o.kernels});
      }
      continue;
    }
    const bool attention = o.op_class == OpClass::attention;
    const bool math = attention && !r.fused_attention;
    const bool conv = o.op_class == OpClass::conv;
    const double efficiency = card.peak.tensor ? (conv ? k.conv_tensor_efficiency : k.matmul_tensor_efficiency)
                                               : (conv ? k.conv_efficiency : k.matmul_efficiency);
    const double bytes = math ? o.math_elems * act + o.other_bytes : bytes_of(o, act, weight_product);
    // An LSTM runs as cuDNN's few kernels per layer and direction, not the CPU's per-step operators:
    // its product is a whole sequence's (fill 1).
    const double fill =
        o.op_class == OpClass::lstm ? 1.0 : wave_fill(o.gemm_m, o.gemm_n, o.gemm_batch, card.spec.compute_units);
    const int kernels = math ? std::max(o.math_kernels, 1) : attention ? 1 : o.kernels;
    out.push_back({index, 0, o.label, o.op_class,
                   phase_time(o.flops_fwd, peak, efficiency * fill, bytes, bandwidth, kernels, k), kernels});
    if (o.flops_bwd_data > 0.0)
      out.push_back({index, 1, o.label, o.op_class,
                     phase_time(o.flops_bwd_data, peak, efficiency * fill, bytes, bandwidth, kernels, k), kernels});
    // Backward to the weights sums over the batch: split-K fills the card whatever the output's shape.
    if (o.flops_bwd_weights > 0.0)
      out.push_back({index, 2, o.label, o.op_class,
                     phase_time(o.flops_bwd_weights, peak, efficiency, bytes, bandwidth, kernels, k), kernels});
  }
  // Per parameter: the optimizer's update, autocast's casts of the weights to the products' type and of
  // their gradients back (6 bytes a parameter each way), fp16's unscaling of the gradients.
  const double params = static_cast<double>(census.parameters);
  const int tensors = static_cast<int>(std::max<int64_t>(census.parameter_tensors, 1));
  const UpdateCost u = update_cost(census.optimizer);
  const double state_bytes = is_pure(r.precision) ? 0.5 : 1.0;
  const auto per_param = [&](const char* label, double bytes, int kernels_per_tensor) {
    const int kernels = kernels_per_tensor * tensors;
    out.push_back(
        {-1, 0, label, OpClass::memory, phase_time(0, peak, 1, bytes * params, bandwidth, kernels, k), kernels});
  };
  per_param("optimizer step", u.bytes_per_param * state_bytes, u.kernels_per_tensor);
  if (autocast16(r.precision)) per_param("autocast weight casts", 12.0, 2);
  if (r.precision == "fp16") per_param("loss scaling", 8.0, 1);
  return out;
}

MemoryForecast forecast_memory(const StepCensus& census, const DeviceSpec& d, const Request& r, const Constants& k) {
  MemoryForecast m;
  // Per sample: the census's fp32 tensors less what written-out attention keeps for backward that a
  // fused kernel does not, in the precision's types: all fp32, all 16-bit (pure), or autocast's mix.
  double saved = 0.0;
  if (r.fused_attention) {
    for (size_t i = 0; i < census.ops1.size(); ++i)
      saved += census.ops2[i].math_saved_elems - census.ops1[i].math_saved_elems;
    saved /= static_cast<double>(census.batch2 - census.batch1);
  }
  const bool pure = is_pure(r.precision);
  const double ratio = r.precision == "fp32" ? 1.0
                       : pure                ? 0.5
                                             : census.autocast_activation_ratio() * k.autocast_memory_factor;
  m.per_sample_bytes = std::max(0.0, (census.activation_bytes_per_sample() - 4.0 * saved) * ratio);
  // Batch-independent: what lives after the forward besides activations (parameters, buffers) and the
  // gradients backward adds (a parameter's size each), in fp32; autocast adds the weights' 16-bit
  // copies; a pure precision holds them all in 16 bits. The step's peak may instead be the optimizer's,
  // the same at any batch: the census's peak at its smallest batch bounds it from below.
  const double params = static_cast<double>(census.parameters);
  const double copies = autocast16(r.precision) ? 2.0 * params : 0.0;
  const double scale = pure ? 0.5 : 1.0;
  m.fixed_bytes = std::max(0.0, (census.forward_base_bytes() + 4.0 * params) * scale + copies);
  const double step_floor = census.tensor_peak1 * scale + copies;
  const double visible = static_cast<double>(d.visible_memory_bytes());
  const double context = static_cast<double>(r.context_bytes);
  const auto reserved = [&](double tensors, double per) { return tensors * per + context; };
  const double at_batch = std::max(step_floor, m.fixed_bytes + m.per_sample_bytes * static_cast<double>(r.batch));
  m.bytes = static_cast<int64_t>(std::llround(reserved(at_batch, kGpuReservedPerTensorByte)));
  m.fits = static_cast<double>(m.bytes) <= visible;
  const auto largest = [&](double per) -> int64_t {
    if (!(m.per_sample_bytes > 0.0)) return 0;
    const double room = (visible - context) / per;
    if (room < step_floor) return 0;
    const double b = std::floor((room - m.fixed_bytes) / m.per_sample_bytes);
    return b < 1.0 ? 0 : static_cast<int64_t>(std::min(b, 1e9));
  };
  m.largest_batch = largest(kGpuReservedPerTensorByte);
  m.largest_batch_low = largest(kGpuReservedPerTensorByteMax);
  m.largest_batch_high = largest(1.0);
  return m;
}

namespace {

// The step from its operators' phase times: the card's sum, the host's issue time, the split by what
// bounds each, the slowest labels.
StepForecast sum_up(const std::vector<OpPhaseTime>& times, const std::vector<double>& seconds, const Constants& k,
                    double interval) {
  StepForecast f;
  std::map<std::string, double> by_label;
  int kernels = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    const auto& t = times[i];
    f.device_s += seconds[i];
    kernels += t.kernels;
    (t.time.bound == Bound::compute  ? f.compute_s
     : t.time.bound == Bound::memory ? f.memory_s
                                     : f.launch_s) += seconds[i];
    by_label[t.label] += seconds[i];
  }
  f.host_s = static_cast<double>(kernels) * k.host_per_kernel_s;
  f.step_s = std::max(f.device_s, f.host_s);
  // A step the host cannot issue fast enough waits on launches: that wait is launch-bound time.
  if (f.host_s > f.device_s) f.launch_s += f.host_s - f.device_s;
  f.low_s = f.step_s * (1.0 - interval);
  f.high_s = f.step_s * (1.0 + interval);
  std::vector<std::pair<std::string, double>> ranked(by_label.begin(), by_label.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  for (size_t i = 0; i < ranked.size() && i < 5; ++i)
    f.slowest.emplace_back(ranked[i].first, ranked[i].second / f.step_s);
  return f;
}

std::vector<double> seconds_of(const std::vector<OpPhaseTime>& times) {
  std::vector<double> s;
  for (const auto& t : times) s.push_back(t.time.seconds);
  return s;
}

}  // namespace

StepForecast forecast(const StepCensus& census, const DeviceSpec& d, const Request& r, const Constants& k) {
  const Card card{d, peak_for(d, r.precision, r.tf32)};
  const auto times = op_times(census, census.ops_at(r.batch), card, r, k);
  StepForecast f = sum_up(times, seconds_of(times), k, k.interval);
  f.peak = card.peak;
  f.memory = forecast_memory(census, d, r, k);
  return f;
}

StepForecast carry(const StepCensus& census, const Profile& profile, const DeviceSpec& source, const DeviceSpec& target,
                   const Request& r, const Constants& k) {
  const std::vector<CensusOp> ops = census.ops_at(r.batch);
  const Card src{source, peak_for(source, r.precision, r.tf32)};
  const Card tgt{target, peak_for(target, r.precision, r.tf32)};
  const auto on_src = op_times(census, ops, src, r, k);
  const auto on_tgt = op_times(census, ops, tgt, r, k);
  const double step_ratio =
      sum_up(on_tgt, seconds_of(on_tgt), k, 0).step_s / sum_up(on_src, seconds_of(on_src), k, 0).step_s;
  // The target's seconds of each row: a profiled layer's phase carried, the rest carried together.
  std::vector<double> seconds(on_tgt.size(), 0.0);
  std::vector<bool> profiled(on_tgt.size(), false);
  double unmatched = 0.0;  // layers the census has no operator for, carried by the step's ratio
  for (const auto& layer : profile.layers) {
    for (int phase = 0; phase < 3; ++phase) {
      double s = 0.0, t = 0.0;
      std::vector<size_t> rows;
      for (size_t i = 0; i < on_tgt.size(); ++i) {
        if (on_tgt[i].op < 0 || on_tgt[i].phase != phase ||
            ops[static_cast<size_t>(on_tgt[i].op)].descriptor != layer.descriptor)
          continue;
        s += on_src[i].time.seconds;
        t += on_tgt[i].time.seconds;
        rows.push_back(i);
      }
      const double measured = static_cast<double>(layer.count) * layer.phase_s[phase];
      const double carried = measured * (rows.empty() || !(s > 0.0) ? step_ratio : t / s);
      if (rows.empty()) unmatched += carried;
      // Spread over the rows by the method's own split (for the slowest layers and the bounds).
      for (size_t i : rows) {
        seconds[i] = t > 0.0 ? carried * on_tgt[i].time.seconds / t : 0.0;
        profiled[i] = true;
      }
    }
  }
  double rest_src = 0.0, rest_tgt = 0.0;
  for (size_t i = 0; i < on_tgt.size(); ++i) {
    if (profiled[i]) continue;
    rest_src += on_src[i].time.seconds;
    rest_tgt += on_tgt[i].time.seconds;
  }
  const double rest_ratio = rest_src > 0.0 ? rest_tgt / rest_src : step_ratio;
  const double other = std::max(0.0, profile.other_s) * rest_ratio + unmatched;
  for (size_t i = 0; i < on_tgt.size(); ++i)
    if (!profiled[i]) seconds[i] = rest_tgt > 0.0 ? other * on_tgt[i].time.seconds / rest_tgt : 0.0;
  StepForecast f = sum_up(on_tgt, seconds, k, k.profile_interval);
  f.peak = tgt.peak;
  f.memory = forecast_memory(census, target, r, k);
  return f;
}

}  // namespace trainbench::predict
