#include "runner/suite.h"

#include "core/device.h"
#include "core/input_file.h"
#include "core/stopping.h"
#include "core/value_rules.h"
#include "workloads/registry.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace trainbench {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail_at(const std::string& path, const toml::source_region& where, const std::string& what) {
  throw InputError(path + ":" + std::to_string(where.begin.line) + ": " + what);
}

// A value may be one scalar or a non-empty array of them.
template <typename T>
std::vector<T> read_list(const std::string& path, const std::string& key, const toml::node& node) {
  std::vector<T> out;
  auto take = [&](const toml::node& n) {
    if (auto v = n.value<T>()) {
      out.push_back(*v);
    } else {
      fail_at(path, n.source(), "key '" + key + "' has a value of the wrong type");
    }
  };
  if (const auto* arr = node.as_array()) {
    if (arr->empty()) fail_at(path, node.source(), "key '" + key + "' is an empty list");
    for (const auto& n : *arr) take(n);
  } else {
    take(node);
  }
  return out;
}

template <typename T>
T read_scalar(const std::string& path, const std::string& key, const toml::node& node) {
  if (auto v = node.value<T>()) return *v;
  fail_at(path, node.source(), "key '" + key + "' has a value of the wrong type");
}

// A parameter value as text: strings as they are, numbers and booleans printed.
std::string param_text(const std::string& path, const std::string& key, const toml::node& n) {
  if (auto v = n.value<std::string>()) return *v;
  if (n.is_integer()) return std::to_string(*n.value<int64_t>());
  if (auto v = n.value<bool>(); v && n.is_boolean()) return *v ? "true" : "false";
  if (n.is_floating_point()) return fmt::format("{}", *n.value<double>());
  fail_at(path, n.source(), "parameter '" + key + "' has a value of the wrong type");
}

std::map<std::string, std::vector<std::string>> read_sets(const std::string& path, const toml::node& node) {
  const auto* t = node.as_table();
  if (t == nullptr) fail_at(path, node.source(), "key 'set' must be a table of parameters");
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [k, v] : *t) {
    const std::string key(k.str());
    if (const auto* arr = v.as_array()) {
      if (arr->empty()) fail_at(path, v.source(), "parameter '" + key + "' is an empty list");
      for (const auto& item : *arr) out[key].push_back(param_text(path, key, item));
    } else {
      out[key].push_back(param_text(path, key, v));
    }
  }
  return out;
}

std::vector<int64_t> read_batches(const std::string& path, const toml::node& node, bool* search = nullptr) {
  // "auto": search the largest batch that fits (as `run --batch auto`), starting at 1.
  if (auto text = node.value<std::string>(); text && search != nullptr) {
    if (*text != "auto")
      fail_at(path, node.source(), "key 'batch' is a size, a list of sizes or \"auto\", not \"" + *text + "\"");
    *search = true;
    return {1};
  }
  std::vector<int64_t> out = read_list<int64_t>(path, "batch", node);
  for (int64_t b : out) {
    if (b <= 0) fail_at(path, node.source(), "key 'batch' has a batch size <= 0");
  }
  return out;
}

std::vector<std::string> read_models(const std::string& path, const toml::node& node) {
  std::vector<std::string> out = read_list<std::string>(path, "model", node);
  for (const auto& m : out) {
    if (!is_known_model(m)) fail_at(path, node.source(), "unknown model '" + m + "' in key 'model'");
  }
  return out;
}

std::vector<int> read_threads(const std::string& path, const toml::node& node) {
  std::vector<int> out;
  for (int64_t n : read_list<int64_t>(path, "threads", node)) {
    const std::string why = number_problem(static_cast<double>(n), kThreadCount);
    if (!why.empty()) fail_at(path, node.source(), "threads: " + std::to_string(n) + " " + why);
    out.push_back(static_cast<int>(n));
  }
  return out;
}

// precision, layout, optimizer: each value one of `allowed`, refused at its own line.
std::vector<std::string> read_choices(const std::string& path, const std::string& key, const toml::node& node,
                                      const std::vector<std::string>& allowed) {
  std::vector<std::string> out = read_list<std::string>(path, key, node);
  for (const auto& v : out) {
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail_at(path, node.source(), "unknown " + key + " '" + v + "' (expected one of: " + list + ")");
  }
  return out;
}

std::vector<std::string> read_devices(const std::string& path, const toml::node& node) {
  std::vector<std::string> out = read_list<std::string>(path, "device", node);
  for (const auto& d : out) {
    try {
      const std::string why = device_unavailable_reason(parse_device(d));
      if (!why.empty()) fail_at(path, node.source(), why);
    } catch (const std::invalid_argument& e) {
      fail_at(path, node.source(), e.what());
    }
  }
  return out;
}

// loader_threads: a count or a list (a sweep axis, as --loader-threads), 0 the default, by --threads' rule.
std::vector<int> read_loader_threads(const std::string& path, const toml::node& node) {
  std::vector<int> out;
  for (int64_t n : read_list<int64_t>(path, "loader_threads", node)) {
    const std::string why = number_problem(static_cast<double>(n), kThreadCount);
    if (!why.empty()) fail_at(path, node.source(), "loader_threads: " + std::to_string(n) + " " + why);
    out.push_back(static_cast<int>(n));
  }
  return out;
}

// data: one source for the group, "synthetic" or a path; a relative path is taken from the suite
// file's folder, so a suite and its data can move together.
std::string read_data(const std::string& path, const toml::node& node) {
  const std::string d = read_scalar<std::string>(path, "data", node);
  if (d.empty()) fail_at(path, node.source(), "key 'data' is empty (a path, or \"synthetic\")");
  if (d == "synthetic" || fs::path(d).is_absolute()) return d;
  return (fs::path(path).parent_path() / d).lexically_normal().string();
}

// Every parameter combination checked against every model of the group, at the line of the `set` key.
void check_params(const std::string& path, const toml::node& set_node, const std::vector<std::string>& models,
                  const std::vector<std::map<std::string, std::string>>& params) {
  for (const auto& m : models) {
    const WorkloadInfo* w = find_workload(m);
    if (w == nullptr) continue;
    for (const auto& p : params) {
      try {
        (void)check_params(*w, p);
      } catch (const std::invalid_argument& e) {
        fail_at(path, set_node.source(), e.what());
      }
    }
  }
}

// [group.cpu] / [group.cuda]: values that replace the group's on that kind of device.
SweepOverride read_override(const std::string& path, const std::string& device, const toml::table& t) {
  SweepOverride o;
  for (const auto& [k, node] : t) {
    const std::string key(k.str());
    if (key == "model")
      o.models = read_models(path, node);
    else if (key == "batch") {
      bool search = false;
      o.batches = read_batches(path, node, &search);
      o.search_batch = search;
    } else if (key == "set")
      o.params = params_product(read_sets(path, node));
    else if (key == "precision")
      o.precisions = read_choices(path, key, node, precision_names());
    else if (key == "layout")
      o.layouts = read_choices(path, key, node, layout_names());
    else if (key == "optimizer")
      o.optimizers = read_choices(path, key, node, known_optimizers());
    else if (key == "threads")
      o.threads = read_threads(path, node);
    else
      fail_at(path, node.source(), "unknown key '" + key + "' in [group." + device + "]");
  }
  return o;
}

Sweep read_group(const std::string& path, const toml::table& t) {
  Sweep s;
  for (const auto& [k, node] : t) {
    const std::string key(k.str());
    if (key == "model") {
      s.models = read_models(path, node);
    } else if (key == "batch") {
      s.batches = read_batches(path, node, &s.search_batch);
    } else if (find_device_kind(key) != nullptr && node.is_table()) {
      s.per_device[key] = read_override(path, key, *node.as_table());
    } else if (key == "precision") {
      s.precisions = read_choices(path, key, node, precision_names());
    } else if (key == "layout") {
      s.layouts = read_choices(path, key, node, layout_names());
    } else if (key == "optimizer") {
      s.optimizers = read_choices(path, key, node, known_optimizers());
    } else if (key == "device") {
      s.devices = read_devices(path, node);
    } else if (key == "threads") {
      s.threads = read_threads(path, node);
    } else if (key == "set") {
      s.params = params_product(read_sets(path, node));
    } else if (key == "forward_only") {
      s.forward_only = read_scalar<bool>(path, key, node);
    } else if (key == "data") {
      s.data = read_data(path, node);
    } else if (key == "data_dtype") {
      s.data_dtype = read_choices(path, key, node, {"uint16", "uint32"}).front();
      if (!node.is_string()) fail_at(path, node.source(), "key 'data_dtype' takes one value");
    } else if (key == "data_transfer") {
      s.data_transfer = read_choices(path, key, node, {"float", "uint8"}).front();
      if (!node.is_string()) fail_at(path, node.source(), "key 'data_transfer' takes one value");
    } else if (key == "loader_threads") {
      s.loader_threads = read_loader_threads(path, node);
    } else {
      fail_at(path, node.source(), "unknown key '" + key + "' in [[group]]");
    }
  }
  if (s.models.empty()) fail_at(path, t.source(), "[[group]] has no 'model'");
  if (s.batches.empty()) fail_at(path, t.source(), "[[group]] has no 'batch'");
  // Loader settings mean nothing without a loader: refused, as the same flags are without --data.
  if (s.data == "synthetic") {
    for (const char* key : {"data_dtype", "data_transfer", "loader_threads"}) {
      if (const toml::node* n = t.get(key))
        fail_at(path, n->source(), std::string("key '") + key + "' needs a 'data' path");
    }
  }
  // Parameters need the models, which may come later in the table: checked once all keys are read.
  if (const toml::node* set = t.get("set")) check_params(path, *set, s.models, s.params);
  for (const auto& [device, o] : s.per_device) {
    const toml::table& dt = *t.get(device)->as_table();
    if (const toml::node* set = dt.get("set"))
      check_params(path, *set, o.models ? *o.models : s.models, o.params ? *o.params : s.params);
    else if (o.models && t.get("set"))
      check_params(path, *t.get("set"), *o.models, s.params);
  }
  try {
    (void)make_plan(s);  // every value checked now, so a bad suite fails before anything runs
  } catch (const InputError& e) {
    fail_at(path, t.source(), e.what());
  }
  return s;
}

// A [settings] number, checked by the same rule as its flag (runner/value_rules.h).
template <typename T>
T read_number(const std::string& path, const std::string& key, const toml::node& node, const NumberRule& rule) {
  const T v = read_scalar<T>(path, key, node);
  const std::string why = number_problem(static_cast<double>(v), rule);
  if (!why.empty()) fail_at(path, node.source(), key + ": " + fmt::format("{}", v) + " " + why);
  return v;
}

SuiteSettings read_settings(const std::string& path, const toml::table& t) {
  SuiteSettings s;
  for (const auto& [k, node] : t) {
    const std::string key(k.str());
    const auto stop = std::find_if(stop_settings().begin(), stop_settings().end(),
                                   [&](const StopSetting& r) { return key == r.name; });
    if (stop != stop_settings().end())
      s.stopping[key] = stop->rule->integer ? static_cast<double>(read_number<int64_t>(path, key, node, *stop->rule))
                                            : read_number<double>(path, key, node, *stop->rule);
    else if (key == "timeout")
      s.timeout = read_number<double>(path, key, node, kSeconds);
    else if (key == "max_image_pixels")
      s.max_image_pixels = read_number<int64_t>(path, key, node, kImagePixels);
    else if (key == "memory_limit") {
      s.memory_limit = read_scalar<std::string>(path, key, node);
      try {
        (void)parse_size(*s.memory_limit, "memory_limit");
      } catch (const InputError& e) {
        fail_at(path, node.source(), e.what());
      }
    } else {
      fail_at(path, node.source(), "unknown key '" + key + "' in [settings]");
    }
    s.origin[key] = path + ":" + std::to_string(node.source().begin.line) + ": " + key;
  }
  // A minimum above its maximum, both set here (core/stopping.h, StopSetting::at_least).
  for (const StopSetting& most : stop_settings()) {
    if (most.at_least == nullptr || !s.stopping.count(most.name) || !s.stopping.count(most.at_least)) continue;
    const double lo = s.stopping.at(most.at_least), hi = s.stopping.at(most.name);
    if (lo > hi) {
      fail_at(path, t.get(most.at_least)->source(),
              fmt::format("{} {} is above {} {}", most.at_least, lo, most.name, hi));
    }
  }
  return s;
}

}  // namespace

std::string suites_directory() {
  if (const char* env = std::getenv("TRAINBENCH_SUITES")) return env;
  return std::string(TRAINBENCH_SOURCE_DIR) + "/suites";
}

std::vector<std::string> builtin_suites() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(suites_directory(), ec)) {
    if (e.path().extension() == ".toml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Suite load_suite(const std::string& name_or_path) {
  std::string path = name_or_path;
  if (name_or_path.find('/') == std::string::npos && name_or_path.find(".toml") == std::string::npos) {
    path = suites_directory() + "/" + name_or_path + ".toml";
    if (!fs::exists(path)) {
      std::string known;
      for (const auto& n : builtin_suites()) known += (known.empty() ? "" : ", ") + n;
      throw InputError("unknown suite '" + name_or_path + "' (built-in: " + known + "; or give a .toml path)");
    }
  }
  if (const std::string why = input_file_problem(path); why == "no such file") {
    throw InputError("suite file '" + path + "' does not exist");
  }
  std::string text;
  try {
    text = read_input_file(path);  // a directory or FIFO is refused at once, never read
  } catch (const std::runtime_error& e) {
    throw InputError(std::string("suite file ") + e.what());
  }
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw InputError(path + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  Suite suite;
  suite.path = path;
  suite.name = fs::path(path).stem().string();
  for (const auto& [k, node] : root) {
    const std::string key(k.str());
    if (key == "description") {
      suite.description = read_scalar<std::string>(path, key, node);
    } else if (key == "settings") {
      if (!node.is_table()) fail_at(path, node.source(), "'settings' must be a table");
      suite.settings = read_settings(path, *node.as_table());
    } else if (key == "group") {
      const auto* groups = node.as_array();
      if (groups == nullptr || !groups->is_array_of_tables())
        fail_at(path, node.source(), "'group' must be [[group]] tables");
      for (const auto& g : *groups) suite.groups.push_back(read_group(path, *g.as_table()));
    } else {
      fail_at(path, node.source(), "unknown key '" + key + "'");
    }
  }
  if (suite.groups.empty()) throw InputError(path + ": the suite has no [[group]]");
  return suite;
}

}  // namespace trainbench
