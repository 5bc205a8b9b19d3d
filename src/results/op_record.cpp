// OpRecord, PeakInfo and Explanation <-> JSON (docs/json-schema.md).
#include "results/op_record.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/precision_text.h"
#include "core/value_rules.h"
#include "results/detail/json_fields.h"

namespace trainbench {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Status read_status(const nlohmann::json& j) {
  try {
    return status_from_string(detail::get_string(j, "status"));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("field \"status\": ") + e.what());
  }
}

template <class T, class F>
std::vector<T> read_array(const nlohmann::json& j, const char* key, F&& read_one) {
  const auto& a = detail::field(j, key);
  if (!a.is_array()) detail::bad_type(key, "an array", a);
  std::vector<T> out;
  for (size_t i = 0; i < a.size(); ++i) {
    out.push_back(
        detail::nested((std::string(key) + "[" + std::to_string(i) + "]").c_str(), [&] { return read_one(a[i]); }));
  }
  return out;
}

}  // namespace

double OpRecord::total_time_s() const {
  double t = 0.0;
  for (const auto& p : phases) t += p.time_s.median;
  return t;
}

double OpRecord::total_flops() const {
  double f = 0.0;
  for (const auto& p : phases) f += p.flops;
  return f;
}

double PeakInfo::peak_for(const std::string& precision, const std::string& tf32) const {
  if (tf32 != "on" || compute_type(precision) != "fp32") return peak_for(precision);
  const auto it = gemm_gflops.find("tf32");
  return it == gemm_gflops.end() ? kNaN : it->second;
}

double PeakInfo::peak_for(const std::string& precision) const {
  const std::string type = compute_type(precision);  // bf16-pure -> bf16
  auto it = gemm_gflops.find(type);
  const double gemm = it == gemm_gflops.end() ? kNaN : it->second;
  if (type == kConvCeilingType && conv_gflops > 0.0 && !(gemm >= conv_gflops)) return conv_gflops;
  return gemm;
}

nlohmann::json to_json(const OpRecord& r) {
  nlohmann::json phases = nlohmann::json::array();
  for (const auto& p : r.phases) {
    phases.push_back({{"phase", p.phase},
                      {"time_s", detail::summary_to_json(p.time_s)},
                      {"samples_s", p.samples_s},
                      {"flops", p.flops},
                      {"achieved_gflops", p.achieved_gflops},
                      {"stop_reason", p.stop_reason}});
  }
  return {{"name", r.name},           {"kind", r.kind},     {"label", r.label},     {"device", r.device},
          {"precision", r.precision}, {"layout", r.layout}, {"threads", r.threads}, {"status", to_string(r.status)},
          {"error", r.error},         {"phases", phases}};
}

OpRecord op_record_from_json(const nlohmann::json& j) {
  using namespace detail;
  OpRecord r;
  r.name = get_string(j, "name");
  r.kind = get_string(j, "kind");
  r.label = get_string(j, "label");
  r.device = get_string(j, "device");
  r.precision = get_string(j, "precision");
  r.layout = get_string(j, "layout");
  r.threads = static_cast<int>(get_int(j, "threads"));
  r.status = read_status(j);
  r.error = get_string(j, "error");
  r.phases = read_array<OpPhaseRecord>(j, "phases", [](const nlohmann::json& p) {
    OpPhaseRecord o;
    o.phase = get_string(p, "phase");
    o.time_s = nested("time_s", [&] { return summary_from_json(field(p, "time_s")); });
    o.samples_s = get_doubles(p, "samples_s");
    o.flops = get_double(p, "flops");
    o.achieved_gflops = get_double(p, "achieved_gflops");
    o.stop_reason = get_string(p, "stop_reason");
    return o;
  });
  return r;
}

nlohmann::json to_json(const PeakInfo& p) {
  return {{"device", p.device},
          {"device_name", p.device_name},
          {"threads", p.threads},
          {"libtorch_version", p.libtorch_version},
          {"measured_at", p.measured_at},
          {"gemm_gflops", p.gemm_gflops},
          {"gemm_unsupported", p.gemm_unsupported},
          {"gemm_size", p.gemm_size},
          {"copy_gbps", p.copy_gbps},
          {"copy_bytes", p.copy_bytes},
          {"conv_gflops", p.conv_gflops},
          {"conv_op", p.conv_op}};
}

PeakInfo peak_info_from_json(const nlohmann::json& j) {
  using namespace detail;
  PeakInfo p;
  p.device = get_string(j, "device");
  p.device_name = get_string(j, "device_name");
  p.threads = static_cast<int>(get_int(j, "threads"));
  p.libtorch_version = get_string(j, "libtorch_version");
  p.measured_at = get_string(j, "measured_at");
  const auto& g = field(j, "gemm_gflops");
  if (!g.is_object()) bad_type("gemm_gflops", "an object", g);
  for (const auto& [k, v] : g.items()) {
    if (!v.is_number()) bad_type("gemm_gflops", "numbers", v);
    p.gemm_gflops[k] = v.get<double>();
  }
  const auto& u = field(j, "gemm_unsupported");
  if (!u.is_object()) bad_type("gemm_unsupported", "an object", u);
  for (const auto& [k, v] : u.items()) {
    if (!v.is_string()) bad_type("gemm_unsupported", "strings", v);
    p.gemm_unsupported[k] = v.get<std::string>();
  }
  p.gemm_size = get_int(j, "gemm_size");
  p.copy_gbps = get_double(j, "copy_gbps");
  p.copy_bytes = get_int(j, "copy_bytes");
  p.conv_gflops = get_double(j, "conv_gflops");
  p.conv_op = get_string(j, "conv_op");
  // A peak read back (the peak cache, a results file) passes the rules of a measured one: a ceiling
  // between 1 MFLOP/s and 10^9 GFLOP/s (an exaflop: beyond any one device), none negative or tiny, so
  // that no %peak or MFU computed from it can be absurd.
  const NumberRule ceiling{1e-3, 1e9, false, false};
  auto check = [](const std::string& key, double v, const NumberRule& r) {
    const std::string why = number_problem(v, r);
    if (!why.empty()) throw std::runtime_error(fmt::format("field \"{}\": {} {}", key, v, why));
  };
  for (const auto& [type, g] : p.gemm_gflops) check("gemm_gflops." + type, g, ceiling);
  if (p.conv_gflops != 0.0) check("conv_gflops", p.conv_gflops, ceiling);  // 0: not measured
  check("copy_gbps", p.copy_gbps, NumberRule{0.0, 1e6, false, false});
  check("threads", p.threads, kThreadCount);
  check("gemm_size", static_cast<double>(p.gemm_size), NumberRule{0.0, 1e6, false, true});
  return p;
}

nlohmann::json to_json(const Explanation& e) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : e.layers) {
    nlohmann::json alts = nlohmann::json::array();
    for (const auto& a : l.alternatives) {
      alts.push_back({{"precision", a.precision},
                      {"layout", a.layout},
                      {"status", to_string(a.status)},
                      {"error", a.error},
                      {"time_s", a.time_s},
                      {"speedup", a.speedup}});
    }
    layers.push_back(
        {{"op", l.op},
         {"label", l.label},
         {"family", l.family},
         {"count", l.count},
         {"input_grad", l.input_grad},
         {"status", to_string(l.status)},
         {"error", l.error},
         {"fwd_s", l.fwd_s},
         {"bwd_data_s", l.bwd_data_s},
         {"bwd_weights_s", l.bwd_weights_s},
         {"time_s", l.time_s},
         {"flops", l.flops},
         {"achieved_gflops", l.achieved_gflops},
         {"percent_of_peak", std::isfinite(l.percent_of_peak) ? nlohmann::json(l.percent_of_peak) : nlohmann::json()},
         {"share", l.share},
         {"flagged", l.flagged},
         {"finding", l.finding},
         {"alternatives", alts}});
  }
  return {{"case", e.case_name},
          {"step_time_s", e.step_time_s},
          {"layers_time_s", e.layers_time_s},
          {"other_time_s", e.other_time_s},
          {"real_data", e.real_data},
          {"data_wait_s", e.data_wait_s},
          {"copy_s", e.copy_s},
          {"peak_gflops", std::isfinite(e.peak_gflops) ? nlohmann::json(e.peak_gflops) : nlohmann::json()},
          {"layers", layers},
          {"findings", e.findings}};
}

Explanation explanation_from_json(const nlohmann::json& j) {
  using namespace detail;
  Explanation e;
  e.case_name = get_string(j, "case");
  e.step_time_s = get_double(j, "step_time_s");
  e.layers_time_s = get_double(j, "layers_time_s");
  e.other_time_s = get_double(j, "other_time_s");
  // Files written before explain knew real data have none of the three: synthetic data.
  if (j.contains("real_data")) {
    e.real_data = get_bool(j, "real_data");
    e.data_wait_s = get_double(j, "data_wait_s");
    e.copy_s = get_double(j, "copy_s");
  }
  e.peak_gflops = get_double(j, "peak_gflops");
  e.layers = read_array<ExplainLayer>(j, "layers", [](const nlohmann::json& x) {
    ExplainLayer l;
    l.op = get_string(x, "op");
    l.label = get_string(x, "label");
    l.family = get_string(x, "family");
    l.count = get_int(x, "count");
    l.input_grad = get_bool(x, "input_grad");
    l.status = read_status(x);
    l.error = get_string(x, "error");
    l.fwd_s = get_double(x, "fwd_s");
    l.bwd_data_s = get_double(x, "bwd_data_s");
    l.bwd_weights_s = get_double(x, "bwd_weights_s");
    l.time_s = get_double(x, "time_s");
    l.flops = get_double(x, "flops");
    l.achieved_gflops = get_double(x, "achieved_gflops");
    l.percent_of_peak = get_double(x, "percent_of_peak");
    l.share = get_double(x, "share");
    l.flagged = get_bool(x, "flagged");
    l.finding = get_string(x, "finding");
    l.alternatives = read_array<ExplainAlternative>(x, "alternatives", [](const nlohmann::json& a) {
      ExplainAlternative o;
      o.precision = get_string(a, "precision");
      o.layout = get_string(a, "layout");
      o.status = read_status(a);
      o.error = get_string(a, "error");
      o.time_s = get_double(a, "time_s");
      o.speedup = get_double(a, "speedup");
      return o;
    });
    return l;
  });
  const auto& f = field(j, "findings");
  if (!f.is_array()) bad_type("findings", "an array of strings", f);
  for (const auto& s : f) {
    if (!s.is_string()) bad_type("findings", "an array of strings", s);
    e.findings.push_back(s.get<std::string>());
  }
  return e;
}

}  // namespace trainbench
