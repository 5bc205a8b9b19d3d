#include "core/precision_text.h"

#include <algorithm>

namespace trainbench {

const std::vector<PrecisionRow>& precision_table() {
  // One row per precision: a new one (fp8, say) is a row here and its type in core/precision.cpp.
  static const std::vector<PrecisionRow> t = {
      {"fp32", "fp32", false, false},     {"fp16", "fp16", false, true},      {"bf16", "bf16", false, false},
      {"fp16-pure", "fp16", true, false}, {"bf16-pure", "bf16", true, false},
  };
  return t;
}

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> n = [] {
    std::vector<std::string> v;
    for (const auto& r : precision_table()) v.emplace_back(r.text);
    return v;
  }();
  return n;
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> n = [] {
    std::vector<std::string> v;
    for (const auto& r : precision_table())
      if (std::find(v.begin(), v.end(), r.type) == v.end()) v.emplace_back(r.type);
    return v;
  }();
  return n;
}

bool is_precision(const std::string& text) {
  const auto& n = precision_names();
  return std::find(n.begin(), n.end(), text) != n.end();
}

std::string compute_type(const std::string& precision) {
  for (const auto& r : precision_table())
    if (precision == r.text) return r.type;
  return "";
}

}  // namespace trainbench
