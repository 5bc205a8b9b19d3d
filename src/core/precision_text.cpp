#include "core/precision_text.h"

#include <algorithm>
#include <stdexcept>

namespace trainbench {

namespace {

Precision value_of(const PrecisionRow& r) { return {r.type, r.pure, r.loss_scaling}; }

std::string names_list() {
  std::string s;
  for (const auto& n : precision_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

const std::vector<PrecisionRow>& precision_table() {
  // One row per precision: a new one (fp8, say) is a row here and its type's dtype in core/precision.cpp.
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

std::string Precision::str() const {
  for (const auto& r : precision_table())
    if (value_of(r) == *this) return r.text;
  throw std::logic_error("a precision outside the table");  // only constructed from the table
}

Precision parse_precision(const std::string& text) {
  for (const auto& r : precision_table())
    if (text == r.text) return value_of(r);
  throw std::invalid_argument("unknown precision '" + text + "' (" + names_list() + ")");
}

}  // namespace trainbench
