#include "runner/suite.h"

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

std::vector<int64_t> read_batches(const std::string& path, const toml::node& node) {
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
  for (int64_t n : read_list<int64_t>(path, "threads", node)) out.push_back(static_cast<int>(n));
  return out;
}

// [group.cpu] / [group.cuda]: values that replace the group's on that kind of device.
SweepOverride read_override(const std::string& path, const std::string& device, const toml::table& t) {
  SweepOverride o;
  for (const auto& [k, node] : t) {
    const std::string key(k.str());
    if (key == "model") o.models = read_models(path, node);
    else if (key == "batch") o.batches = read_batches(path, node);
    else if (key == "set") o.params = params_product(read_sets(path, node));
    else if (key == "precision") o.precisions = read_list<std::string>(path, key, node);
    else if (key == "layout") o.layouts = read_list<std::string>(path, key, node);
    else if (key == "optimizer") o.optimizers = read_list<std::string>(path, key, node);
    else if (key == "threads") o.threads = read_threads(path, node);
    else fail_at(path, node.source(), "unknown key '" + key + "' in [group." + device + "]");
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
      s.batches = read_batches(path, node);
    } else if ((key == "cpu" || key == "cuda") && node.is_table()) {
      s.per_device[key] = read_override(path, key, *node.as_table());
    } else if (key == "precision") {
      s.precisions = read_list<std::string>(path, key, node);
    } else if (key == "layout") {
      s.layouts = read_list<std::string>(path, key, node);
    } else if (key == "optimizer") {
      s.optimizers = read_list<std::string>(path, key, node);
    } else if (key == "device") {
      s.devices = read_list<std::string>(path, key, node);
    } else if (key == "threads") {
      s.threads = read_threads(path, node);
    } else if (key == "set") {
      s.params = params_product(read_sets(path, node));
    } else if (key == "forward_only") {
      s.forward_only = read_scalar<bool>(path, key, node);
    } else {
      fail_at(path, node.source(), "unknown key '" + key + "' in [[group]]");
    }
  }
  if (s.models.empty()) fail_at(path, t.source(), "[[group]] has no 'model'");
  if (s.batches.empty()) fail_at(path, t.source(), "[[group]] has no 'batch'");
  try {
    (void)make_plan(s);  // every value checked now, so a bad suite fails before anything runs
  } catch (const InputError& e) {
    fail_at(path, t.source(), e.what());
  }
  return s;
}

SuiteSettings read_settings(const std::string& path, const toml::table& t) {
  SuiteSettings s;
  for (const auto& [k, node] : t) {
    const std::string key(k.str());
    if (key == "warmup") s.warmup = read_scalar<int64_t>(path, key, node);
    else if (key == "min_steps") s.min_steps = read_scalar<int64_t>(path, key, node);
    else if (key == "min_time") s.min_time = read_scalar<double>(path, key, node);
    else if (key == "max_time") s.max_time = read_scalar<double>(path, key, node);
    else if (key == "max_noise") s.max_noise_pct = read_scalar<double>(path, key, node);
    else if (key == "timeout") s.timeout = read_scalar<double>(path, key, node);
    else if (key == "memory_limit") s.memory_limit = read_scalar<std::string>(path, key, node);
    else fail_at(path, node.source(), "unknown key '" + key + "' in [settings]");
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
  if (!fs::exists(path)) throw InputError("suite file '" + path + "' does not exist");
  toml::table root;
  try {
    root = toml::parse_file(path);
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
      if (groups == nullptr || !groups->is_array_of_tables()) fail_at(path, node.source(), "'group' must be [[group]] tables");
      for (const auto& g : *groups) suite.groups.push_back(read_group(path, *g.as_table()));
    } else {
      fail_at(path, node.source(), "unknown key '" + key + "'");
    }
  }
  if (suite.groups.empty()) throw InputError(path + ": the suite has no [[group]]");
  return suite;
}

}  // namespace trainbench
