#include "runner/plan.h"

#include "data/data_error.h"
#include "data/source_check.h"
#include "data/token_file.h"
#include "workloads/registry.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace trainbench {
namespace {

const std::string& check_one_of(const std::string& value, const std::vector<std::string>& allowed,
                                const std::string& what) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return value;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw InputError("unknown " + what + " '" + value + "' (expected one of: " + list + ")");
}

}  // namespace

void validate_case(Case& c) {
  const WorkloadInfo* w = find_workload(c.model);
  if (w == nullptr) throw InputError("unknown model '" + c.model + "' (see `trainbench list`)");
  try {
    c.params = check_params(*w, c.params);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  if (c.batch <= 0) throw InputError("bad batch size " + std::to_string(c.batch) + " (must be > 0)");
  check_one_of(c.optimizer, known_optimizers(), "optimizer");
  if (c.threads < 0) throw InputError("bad thread count " + std::to_string(c.threads) + " (must be >= 0)");
  if (c.loader_threads < 0 || c.loader_threads > kThreadCount.hi) {
    throw InputError("bad loader thread count " + std::to_string(c.loader_threads));
  }
  if (c.synthetic_data()) c.loader_threads = 0;  // no loader: the axis means nothing
  if (c.data_transfer != "float" && c.data_transfer != "uint8") {
    throw InputError("bad data transfer '" + c.data_transfer + "' (float or uint8)");
  }
  if (c.synthetic_data()) c.data_transfer = "float";
  if (c.data_transfer == "uint8" && w->data_kind != data::DataKind::images) {
    throw InputError(c.model + ": --data-transfer uint8 is for image folders (token ids travel as they are)");
  }
  try {
    const Params all = effective_params(*w, c.params);
    const auto vocab = all.count("vocab") ? std::optional<int64_t>(std::stoll(all.at("vocab"))) : std::nullopt;
    data::token_width(c.data_dtype);
    data::check_data_source(c.model, w->data_kind, c.data, c.data_dtype, vocab);
  } catch (const DataError& e) {
    throw InputError(e.what());
  }
  // A device this build or machine does not have fails the plan, before anything runs.
  if (const std::string why = device_unavailable_reason(c.device); !why.empty()) throw InputError(why);
}

namespace {

void append_cases(const Sweep& s, const std::vector<DeviceSpec>& devices, std::vector<Case>& plan) {
  if (s.models.empty()) throw InputError("no model given (use --model NAME or --suite NAME)");
  if (s.batches.empty()) throw InputError("no batch size given (use --batch N[,N...])");
  const std::vector<std::map<std::string, std::string>> params =
      s.params.empty() ? std::vector<std::map<std::string, std::string>>{{}} : s.params;
  for (const auto& model : s.models) {
    for (const auto& p : params) {
      for (int64_t batch : s.batches) {
        for (const auto& precision : s.precisions) {
          for (const auto& layout : s.layouts) {
            for (const auto& optimizer : s.optimizers) {
              for (int threads : s.threads) {
                for (int loader_threads : s.loader_threads) {
                  for (const auto& device : devices) {
                    Case c;
                    c.model = model;
                    c.params = p;
                    c.batch = batch;
                    c.precision = parse_precision(check_one_of(precision, precision_names(), "precision"));
                    c.layout = parse_layout(check_one_of(layout, layout_names(), "layout"));
                    c.optimizer = optimizer;
                    c.threads = threads;
                    c.device = device;
                    c.forward_only = s.forward_only;
                    c.data = s.data;
                    c.data_dtype = s.data_dtype;
                    c.data_transfer = s.data_transfer;
                    c.loader_threads = loader_threads;
                    validate_case(c);
                    plan.push_back(std::move(c));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

Sweep with_override(Sweep s, const SweepOverride& o) {
  if (o.models) s.models = *o.models;
  if (o.params) s.params = *o.params;
  if (o.batches) s.batches = *o.batches;
  if (o.precisions) s.precisions = *o.precisions;
  if (o.layouts) s.layouts = *o.layouts;
  if (o.optimizers) s.optimizers = *o.optimizers;
  if (o.threads) s.threads = *o.threads;
  return s;
}

}  // namespace

std::vector<Case> make_plan(const Sweep& s) {
  std::vector<DeviceSpec> devices;
  for (const auto& d : s.devices) {
    try {
      devices.push_back(parse_device(d));
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
  }
  if (devices.empty()) devices.push_back(parse_device(best_device()));
  std::vector<Case> plan;
  if (s.per_device.empty()) {
    append_cases(s, devices, plan);  // devices innermost: a case's rows on each device sit together
    return plan;
  }
  for (const auto& d : devices) {
    const auto it = s.per_device.find(d.type);
    append_cases(it == s.per_device.end() ? s : with_override(s, it->second), {d}, plan);
  }
  return plan;
}

bool searches_batch(const Sweep& s, const std::string& device_type) {
  const auto it = s.per_device.find(device_type);
  if (it != s.per_device.end() && it->second.batches) return it->second.search_batch.value_or(false);
  return s.search_batch;
}

std::vector<std::map<std::string, std::string>> params_product(
    const std::map<std::string, std::vector<std::string>>& values) {
  std::vector<std::map<std::string, std::string>> out = {{}};
  for (const auto& [key, options] : values) {
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& partial : out) {
      for (const auto& v : options) {
        auto p = partial;
        p[key] = v;
        next.push_back(std::move(p));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::map<std::string, std::vector<std::string>> parse_sets(const std::vector<std::string>& sets) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
      throw InputError("bad --set '" + s + "' (expected key=value or key=v1,v2)");
    }
    const std::string key = s.substr(0, eq);
    if (out.count(key)) throw InputError("--set " + key + " given twice (give one comma list instead)");
    out[key] = split_list(s.substr(eq + 1), "--set " + key);
  }
  return out;
}

}  // namespace trainbench
