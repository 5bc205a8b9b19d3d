#include "predict/census.h"

#include <cctype>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace trainbench::predict {
namespace {

struct ClassName {
  OpClass c;
  const char* name;
};
constexpr ClassName kClassNames[] = {{OpClass::conv, "conv"},
                                     {OpClass::matmul, "matmul"},
                                     {OpClass::lstm, "lstm"},
                                     {OpClass::attention, "attention"},
                                     {OpClass::memory, "memory"}};

double lerp(double a, double b, double t) { return a + (b - a) * t; }

// An op descriptor ("conv:mb2ic64ih56oc64kh3ph1") at another batch: each number that differs between
// the descriptors at the census's two batches read off their line (the batch, or rows that grow with
// it); the rest as they are. "" when the two do not have the same fields.
std::string descriptor_at(const std::string& a, const std::string& b, double t) {
  if (a == b) return a;
  const auto split = [](const std::string& d) {
    std::vector<std::pair<std::string, std::string>> parts;  // text, then the number after it
    size_t i = 0;
    while (i < d.size()) {
      size_t j = i;
      while (j < d.size() && !std::isdigit(static_cast<unsigned char>(d[j]))) ++j;
      size_t k = j;
      while (k < d.size() && std::isdigit(static_cast<unsigned char>(d[k]))) ++k;
      parts.emplace_back(d.substr(i, j - i), d.substr(j, k - j));
      i = k;
    }
    return parts;
  };
  const auto pa = split(a), pb = split(b);
  if (pa.size() != pb.size()) return "";
  std::string out;
  for (size_t i = 0; i < pa.size(); ++i) {
    if (pa[i].first != pb[i].first) return "";
    out += pa[i].first;
    if (pa[i].second == pb[i].second || pa[i].second.empty() || pb[i].second.empty()) {
      out += pa[i].second;
    } else {
      out += std::to_string(std::llround(lerp(std::stod(pa[i].second), std::stod(pb[i].second), t)));
    }
  }
  return out;
}

// The counts of an operator, in one place for JSON both ways and the checks.
struct NumberField {
  const char* key;
  double CensusOp::*member;
};
constexpr NumberField kOpNumbers[] = {{"flops_fwd", &CensusOp::flops_fwd},
                                      {"flops_bwd_data", &CensusOp::flops_bwd_data},
                                      {"flops_bwd_weights", &CensusOp::flops_bwd_weights},
                                      {"act_elems", &CensusOp::act_elems},
                                      {"weight_elems", &CensusOp::weight_elems},
                                      {"other_bytes", &CensusOp::other_bytes},
                                      {"bwd_elems", &CensusOp::bwd_elems},
                                      {"gemm_m", &CensusOp::gemm_m},
                                      {"gemm_n", &CensusOp::gemm_n},
                                      {"gemm_batch", &CensusOp::gemm_batch},
                                      {"math_elems", &CensusOp::math_elems},
                                      {"math_saved_elems", &CensusOp::math_saved_elems},
                                      {"out_elems", &CensusOp::out_elems},
                                      {"cast_elems", &CensusOp::cast_elems}};

double count_at(const nlohmann::json& j, const std::string& where, const char* key) {
  if (!j.contains(key) || !j.at(key).is_number())
    throw std::runtime_error(fmt::format("field \"{}{}\": missing or not a number", where, key));
  const double v = j.at(key).get<double>();
  if (!std::isfinite(v) || v < 0.0 || v > 1e24)
    throw std::runtime_error(fmt::format("field \"{}{}\": {} is not a count", where, key, v));
  return v;
}

std::string string_at(const nlohmann::json& j, const std::string& where, const char* key) {
  if (!j.contains(key) || !j.at(key).is_string())
    throw std::runtime_error(fmt::format("field \"{}{}\": missing or not a string", where, key));
  return j.at(key).get<std::string>();
}

nlohmann::json op_to_json(const CensusOp& o) {
  nlohmann::json j = {{"name", o.name},
                      {"label", o.label},
                      {"descriptor", o.descriptor},
                      {"class", to_string(o.op_class)},
                      {"kernels", o.kernels},
                      {"math_kernels", o.math_kernels},
                      {"has_backward", o.has_backward},
                      {"out_wide", o.out_wide}};
  for (const auto& f : kOpNumbers) j[f.key] = o.*f.member;
  return j;
}

CensusOp op_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(fmt::format("field \"{}\": not an object", where));
  CensusOp o;
  o.name = string_at(j, where, "name");
  o.label = string_at(j, where, "label");
  o.descriptor = string_at(j, where, "descriptor");
  try {
    o.op_class = op_class_from_string(string_at(j, where, "class"));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("field \"{}class\": {}", where, e.what()));
  }
  for (const auto& f : kOpNumbers) o.*f.member = count_at(j, where, f.key);
  const double kernels = count_at(j, where, "kernels"), math_kernels = count_at(j, where, "math_kernels");
  if (kernels > 1e6 || math_kernels > 1e6)
    throw std::runtime_error(fmt::format("field \"{}kernels\": too many", where));
  o.kernels = static_cast<int>(kernels);
  o.math_kernels = static_cast<int>(math_kernels);
  if (!j.contains("has_backward") || !j.at("has_backward").is_boolean())
    throw std::runtime_error(fmt::format("field \"{}has_backward\": missing or not true/false", where));
  o.has_backward = j.at("has_backward").get<bool>();
  if (!j.contains("out_wide") || !j.at("out_wide").is_boolean())
    throw std::runtime_error(fmt::format("field \"{}out_wide\": missing or not true/false", where));
  o.out_wide = j.at("out_wide").get<bool>();
  return o;
}

std::vector<CensusOp> ops_from_json(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j.at(key).is_array())
    throw std::runtime_error(fmt::format("field \"{}\": not an array", key));
  std::vector<CensusOp> ops;
  for (size_t i = 0; i < j.at(key).size(); ++i)
    ops.push_back(op_from_json(j.at(key)[i], fmt::format("{}[{}].", key, i)));
  return ops;
}

}  // namespace

const char* to_string(OpClass c) {
  for (const auto& n : kClassNames)
    if (n.c == c) return n.name;
  return "memory";
}

OpClass op_class_from_string(const std::string& s) {
  for (const auto& n : kClassNames)
    if (s == n.name) return n.c;
  throw std::invalid_argument("'" + s + "' (expected conv, matmul, lstm, attention or memory)");
}

std::vector<CensusOp> StepCensus::ops_at(int64_t batch) const {
  const double t = static_cast<double>(batch - batch1) / static_cast<double>(batch2 - batch1);
  std::vector<CensusOp> out = ops1;
  for (size_t i = 0; i < out.size(); ++i) {
    for (const auto& f : kOpNumbers) {
      // The product's shape: rows grow with the batch, or the count of products does; never below 0.
      out[i].*f.member = std::max(0.0, lerp(ops1[i].*f.member, ops2[i].*f.member, t));
    }
    out[i].gemm_batch = std::max(1.0, out[i].gemm_batch);
    out[i].descriptor = descriptor_at(ops1[i].descriptor, ops2[i].descriptor, t);
  }
  return out;
}

double StepCensus::activation_bytes_per_sample() const {
  return (forward_live2 - forward_live1) / static_cast<double>(batch2 - batch1);
}

double StepCensus::autocast_activation_ratio() const {
  double typed = 0.0, fp32 = 0.0;
  for (size_t i = 0; i < ops1.size(); ++i) {
    const double out = ops2[i].out_elems - ops1[i].out_elems, cast = ops2[i].cast_elems - ops1[i].cast_elems;
    typed += out * (ops1[i].out_wide ? 4.0 : 2.0) + 4.0 * cast;
    fp32 += 4.0 * out;
  }
  return fp32 > 0.0 ? typed / fp32 : 0.5;
}

double StepCensus::forward_base_bytes() const {
  return forward_live1 - activation_bytes_per_sample() * static_cast<double>(batch1);
}

nlohmann::json to_json(const StepCensus& c) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : c.params) params[k] = v;
  nlohmann::json ops1 = nlohmann::json::array(), ops2 = nlohmann::json::array();
  for (const auto& o : c.ops1) ops1.push_back(op_to_json(o));
  for (const auto& o : c.ops2) ops2.push_back(op_to_json(o));
  return {{"census_version", 1},
          {"model", c.model},
          {"params", params},
          {"optimizer", c.optimizer},
          {"layout", c.layout},
          {"unit", c.unit},
          {"tokens_per_sample", c.tokens_per_sample},
          {"libtorch_version", c.libtorch_version},
          {"batch1", c.batch1},
          {"batch2", c.batch2},
          {"parameters", c.parameters},
          {"parameter_tensors", c.parameter_tensors},
          {"tensor_peak1", c.tensor_peak1},
          {"tensor_peak2", c.tensor_peak2},
          {"forward_live1", c.forward_live1},
          {"forward_live2", c.forward_live2},
          {"model_flops_per_sample", c.model_flops_per_sample},
          {"ops1", ops1},
          {"ops2", ops2}};
}

StepCensus census_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::runtime_error("a census is a JSON object");
  if (!j.contains("census_version") || j.at("census_version") != 1)
    throw std::runtime_error("field \"census_version\": not 1 (written by another trainbench?)");
  StepCensus c;
  c.model = string_at(j, "", "model");
  if (!j.contains("params") || !j.at("params").is_object()) throw std::runtime_error("field \"params\": not an object");
  for (const auto& [k, v] : j.at("params").items()) {
    if (!v.is_string()) throw std::runtime_error("field \"params." + k + "\": not a string");
    c.params[k] = v.get<std::string>();
  }
  c.optimizer = string_at(j, "", "optimizer");
  c.layout = string_at(j, "", "layout");
  c.unit = string_at(j, "", "unit");
  c.libtorch_version = string_at(j, "", "libtorch_version");
  c.tokens_per_sample = static_cast<int64_t>(count_at(j, "", "tokens_per_sample"));
  c.batch1 = static_cast<int64_t>(count_at(j, "", "batch1"));
  c.batch2 = static_cast<int64_t>(count_at(j, "", "batch2"));
  if (c.batch1 < 1 || c.batch2 <= c.batch1) throw std::runtime_error("field \"batch2\": not above batch1 >= 1");
  c.parameters = static_cast<int64_t>(count_at(j, "", "parameters"));
  c.parameter_tensors = static_cast<int64_t>(count_at(j, "", "parameter_tensors"));
  c.tensor_peak1 = count_at(j, "", "tensor_peak1");
  c.tensor_peak2 = count_at(j, "", "tensor_peak2");
  c.forward_live1 = count_at(j, "", "forward_live1");
  c.forward_live2 = count_at(j, "", "forward_live2");
  c.model_flops_per_sample = count_at(j, "", "model_flops_per_sample");
  c.ops1 = ops_from_json(j, "ops1");
  c.ops2 = ops_from_json(j, "ops2");
  if (c.ops1.size() != c.ops2.size()) throw std::runtime_error("field \"ops2\": not as many operators as ops1");
  for (size_t i = 0; i < c.ops1.size(); ++i) {
    if (c.ops1[i].name != c.ops2[i].name || c.ops1[i].op_class != c.ops2[i].op_class)
      throw std::runtime_error(fmt::format("field \"ops2[{}]\": not the operator of ops1[{}]", i, i));
  }
  return c;
}

}  // namespace trainbench::predict
