#include "core/precision.h"

#include <stdexcept>

namespace trainbench {
namespace {

// LibTorch's dtype for a type of the precision table.
c10::ScalarType dtype_of(const std::string& type) {
  if (type == "fp16") return c10::kHalf;
  if (type == "bf16") return c10::kBFloat16;
  if (type == "fp32") return c10::kFloat;
  throw std::logic_error("precision type '" + type + "' has no dtype");  // a row without its type here
}

Precision value_of(const PrecisionRow& r) { return {dtype_of(r.type), r.pure, r.loss_scaling}; }

std::string names_list() {
  std::string s;
  for (const auto& n : precision_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

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
