#include "cases/workload_info.h"

#include <stdexcept>

#include "cases/descriptions.h"
#include "cases/zoo.h"
#include "core/value_rules.h"

namespace trainbench {
namespace {

std::vector<WorkloadInfo> build_registry() {
  std::vector<WorkloadInfo> all;
  for (const auto& m : models::zoo_models()) {
    WorkloadInfo w;
    w.name = m.name;
    w.family = m.family;
    w.unit = "images/s";
    for (int64_t d : m.input_shape) w.input += (w.input.empty() ? "" : "x") + std::to_string(d);
    w.default_batch = m.default_batch;
    w.description = m.description;
    w.data_kind = data::DataKind::images;
    all.push_back(std::move(w));
  }
  for (auto make : {convnet_workload_info, bilstm_workload_info, bert_workload_info, gpt_workload_info,
                    llama_workload_info, script_workload_info})
    all.push_back(make());
  return all;
}

}  // namespace

const std::vector<WorkloadInfo>& all_workloads() {
  static const std::vector<WorkloadInfo> registry = build_registry();
  return registry;
}

const std::vector<FamilyInfo>& workload_families() {
  static const std::vector<FamilyInfo> families = {
      {"cnn", "CNNs"}, {"ablation", "ablation"}, {"lstm", "LSTM"}, {"transformer", "Transformer"}};
  return families;
}

const WorkloadInfo* find_workload(const std::string& name) {
  for (const auto& w : all_workloads()) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

Params canonical_params(const WorkloadInfo& w, const Params& given) {
  Params out;
  for (const auto& [key, value] : given) {
    const ParamSpec* spec = nullptr;
    for (const auto& p : w.params) {
      if (p.key == key) spec = &p;
    }
    if (spec == nullptr) {
      std::string keys;
      for (const auto& p : w.params) keys += (keys.empty() ? "" : ", ") + p.key;
      throw std::invalid_argument("unknown parameter '" + key + "' for " + w.name +
                                  (keys.empty() ? " (it takes none)" : " (expected one of: " + keys + ")"));
    }
    try {
      if (spec->check) spec->check(value);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("bad value '" + value + "' for " + w.name + " parameter '" + key + "': " + e.what());
    }
    if (value != spec->default_value) out[key] = value;
  }
  if (w.check_together) w.check_together(effective_params(w, given));
  return out;
}

Params effective_params(const WorkloadInfo& w, const Params& given) {
  Params out;
  for (const auto& p : w.params) out[p.key] = p.default_value;
  for (const auto& [k, v] : given) out[k] = v;
  return out;
}

std::function<void(const std::string&)> int_in_range(int64_t lo, int64_t hi) {
  return [lo, hi](const std::string& v) {
    int64_t x = 0;
    if (const std::string why = whole_number_problem(v, &x); !why.empty()) throw std::invalid_argument(why);
    if (x < lo || x > hi) {
      throw std::invalid_argument("expected " + std::to_string(lo) + " to " + std::to_string(hi));
    }
  };
}

std::function<void(const std::string&)> one_of(std::vector<std::string> values) {
  return [values](const std::string& v) {
    for (const auto& a : values) {
      if (a == v) return;
    }
    std::string list;
    for (const auto& a : values) list += (list.empty() ? "" : ", ") + a;
    throw std::invalid_argument("expected one of: " + list);
  };
}

int64_t param_int(const Params& p, const std::string& key) { return std::stoll(p.at(key)); }
const std::string& param_str(const Params& p, const std::string& key) { return p.at(key); }

bool is_known_model(const std::string& name) { return find_workload(name) != nullptr; }

}  // namespace trainbench
