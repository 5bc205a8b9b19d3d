#include "predict/catalogue.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/input_file.h"
#include "core/value_rules.h"

namespace trainbench::predict {
namespace {

// devices.csv as a raw string (CMake writes predict/devices_csv.inc from src/predict/devices.csv).
const char* const kBuiltinCatalogue =
#include "predict/devices_csv.inc"
    ;

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

bool valid_id(const std::string& id) {
  if (id.empty() || id.size() > 40 || id.front() == '-' || id.back() == '-') return false;
  return std::all_of(id.begin(), id.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

int64_t DeviceSpec::visible_memory_bytes() const {
  return static_cast<int64_t>(std::floor(memory_gb * 1073741824.0 * kVisibleMemoryShare));
}

const std::vector<std::string>& catalogue_columns() {
  static const std::vector<std::string> columns = {
      "id",          "name",           "vendor",        "architecture", "compute_units", "boost_mhz",
      "memory_gb",   "memory_gbps",    "l2_mb",         "fp32_tflops",  "tf32_tflops",   "bf16_tflops",
      "fp16_tflops", "host_link_gbps", "gpu_link_gbps", "tdp_w",        "source"};
  return columns;
}

std::vector<DeviceSpec> parse_catalogue(const std::string& text, const std::string& origin) {
  std::vector<DeviceSpec> rows;
  std::set<std::string> ids;
  std::istringstream in(text);
  std::string line;
  bool header_seen = false;
  const auto& columns = catalogue_columns();
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    const auto fail = [&](const std::string& why) {
      throw InputError(fmt::format("{} line {}: {}", origin, line_no, why));
    };
    const std::vector<std::string> cells = split_cells(line);
    if (!header_seen) {
      if (cells != columns) fail("the header must be: " + fmt::format("{}", fmt::join(columns, ",")));
      header_seen = true;
      continue;
    }
    if (cells.size() != columns.size())
      fail(fmt::format("{} cells, the header has {} (a comma inside a cell is not allowed)", cells.size(),
                       columns.size()));
    const auto cell = [&](const char* column) -> const std::string& {
      const auto at = std::find(columns.begin(), columns.end(), column) - columns.begin();
      return cells[static_cast<size_t>(at)];
    };
    const auto text_cell = [&](const char* column) {
      const std::string& v = cell(column);
      if (v.empty()) fail(fmt::format("column {}: empty", column));
      for (char c : v)
        if (static_cast<unsigned char>(c) < 0x20) fail(fmt::format("column {}: a control character", column));
      return v;
    };
    const auto number_cell = [&](const char* column) -> std::optional<double> {
      const std::string& v = cell(column);
      if (v.empty()) return std::nullopt;
      double x = 0.0;
      const std::string why = number_text_problem(v, NumberRule{0.0, 1e9, true, false}, &x);
      if (!why.empty()) fail(fmt::format("column {}: '{}' {}", column, v, why));
      return x;
    };
    const auto required = [&](const char* column) {
      const auto v = number_cell(column);
      if (!v) fail(fmt::format("column {}: empty (every row needs it)", column));
      return *v;
    };
    DeviceSpec d;
    d.id = text_cell("id");
    if (!valid_id(d.id)) fail(fmt::format("column id: '{}' is not lower-case letters, digits and '-'", d.id));
    if (!ids.insert(d.id).second) fail(fmt::format("column id: '{}' appears twice", d.id));
    d.name = text_cell("name");
    d.vendor = text_cell("vendor");
    d.architecture = text_cell("architecture");
    const double units = required("compute_units");
    if (units != std::floor(units)) fail("column compute_units: not a whole number");
    d.compute_units = static_cast<int64_t>(units);
    d.boost_mhz = required("boost_mhz");
    d.memory_gb = required("memory_gb");
    d.memory_gbps = required("memory_gbps");
    d.l2_mb = required("l2_mb");
    d.fp32_tflops = required("fp32_tflops");
    d.tf32_tflops = number_cell("tf32_tflops");
    d.bf16_tflops = number_cell("bf16_tflops");
    d.fp16_tflops = number_cell("fp16_tflops");
    d.host_link_gbps = required("host_link_gbps");
    d.gpu_link_gbps = number_cell("gpu_link_gbps");
    d.tdp_w = required("tdp_w");
    d.source = text_cell("source");
    rows.push_back(std::move(d));
  }
  if (!header_seen) throw InputError(origin + ": no header line (" + fmt::format("{}", fmt::join(columns, ",")) + ")");
  if (rows.empty()) throw InputError(origin + ": no device rows");
  return rows;
}

const std::vector<DeviceSpec>& builtin_catalogue() {
  static const std::vector<DeviceSpec> rows = parse_catalogue(kBuiltinCatalogue, "the built-in catalogue");
  return rows;
}

std::vector<DeviceSpec> load_catalogue(const std::string& path) {
  if (path.empty()) return builtin_catalogue();
  std::string text;
  try {
    text = read_input_file(path);
  } catch (const std::exception& e) {
    throw InputError(std::string("--catalogue ") + e.what());
  }
  return parse_catalogue(text, path);
}

std::vector<DeviceSpec> select_devices(const std::vector<DeviceSpec>& catalogue, const std::vector<std::string>& ids,
                                       const std::string& flag) {
  if (ids.size() == 1 && ids.front() == "all") return catalogue;
  std::vector<DeviceSpec> out;
  std::set<std::string> seen;
  for (const auto& id : ids) {
    if (id == "all") throw InputError(flag + ": 'all' stands alone, not in a list");
    if (!seen.insert(id).second) throw InputError(fmt::format("{}: device '{}' named twice", flag, id));
    const auto it = std::find_if(catalogue.begin(), catalogue.end(), [&](const DeviceSpec& d) { return d.id == id; });
    if (it != catalogue.end()) {
      out.push_back(*it);
      continue;
    }
    // Closest first: a prefix match (h100 -> h100-sxm) counts as near; then by edit distance.
    std::vector<std::pair<size_t, std::string>> ranked;
    for (const auto& d : catalogue) {
      const bool prefix = d.id.rfind(id, 0) == 0 || id.rfind(d.id, 0) == 0;
      ranked.emplace_back(prefix ? 0 : edit_distance(id, d.id), d.id);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> closest;
    for (size_t i = 0; i < ranked.size() && i < 3; ++i) closest.push_back(ranked[i].second);
    throw InputError(fmt::format("{}: unknown device '{}'; closest: {}; `trainbench devices` lists them", flag, id,
                                 fmt::join(closest, ", ")));
  }
  return out;
}

nlohmann::json to_json(const DeviceSpec& d) {
  const auto opt = [](const std::optional<double>& v) -> nlohmann::json { return v ? nlohmann::json(*v) : nullptr; };
  return {{"id", d.id},
          {"name", d.name},
          {"vendor", d.vendor},
          {"architecture", d.architecture},
          {"compute_units", d.compute_units},
          {"boost_mhz", d.boost_mhz},
          {"memory_gb", d.memory_gb},
          {"memory_gbps", d.memory_gbps},
          {"l2_mb", d.l2_mb},
          {"fp32_tflops", d.fp32_tflops},
          {"tf32_tflops", opt(d.tf32_tflops)},
          {"bf16_tflops", opt(d.bf16_tflops)},
          {"fp16_tflops", opt(d.fp16_tflops)},
          {"host_link_gbps", d.host_link_gbps},
          {"gpu_link_gbps", opt(d.gpu_link_gbps)},
          {"tdp_w", d.tdp_w},
          {"source", d.source}};
}

}  // namespace trainbench::predict
