#include "core/precision.h"

#include <algorithm>
#include <stdexcept>

namespace trainbench {
namespace {

struct Entry {
  const char* text;
  Precision value;
};

// One row per precision: a new one (fp8, say) is a row here.
const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      {"fp32", {c10::kFloat, false, false}},        {"fp16", {c10::kHalf, false, true}},
      {"bf16", {c10::kBFloat16, false, false}},     {"fp16-pure", {c10::kHalf, true, false}},
      {"bf16-pure", {c10::kBFloat16, true, false}},
  };
  return t;
}

std::string names_list() {
  std::string s;
  for (const auto& e : table()) s += (s.empty() ? "" : ", ") + std::string(e.text);
  return s;
}

}  // namespace

std::string Precision::str() const {
  for (const auto& e : table())
    if (e.value == *this) return e.text;
  throw std::logic_error("a precision outside the table");  // only constructed from the table
}

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> n = [] {
    std::vector<std::string> v;
    for (const auto& e : table()) v.emplace_back(e.text);
    return v;
  }();
  return n;
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> n = [] {
    std::vector<std::string> v;
    for (const auto& e : table())
      if (!e.value.pure) v.emplace_back(e.text);
    return v;
  }();
  return n;
}

bool is_precision(const std::string& text) {
  const auto& n = precision_names();
  return std::find(n.begin(), n.end(), text) != n.end();
}

Precision parse_precision(const std::string& text) {
  for (const auto& e : table())
    if (text == e.text) return e.value;
  throw std::invalid_argument("unknown precision '" + text + "' (" + names_list() + ")");
}

}  // namespace trainbench
