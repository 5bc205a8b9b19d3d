#include "core/value_rules.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace trainbench {

std::string number_problem(double v, const NumberRule& r) {
  if (!std::isfinite(v)) return "must be a finite number";
  if (r.integer && v != std::floor(v)) return "must be a whole number";
  if ((r.lo_exclusive ? v <= r.lo : v < r.lo) || v > r.hi) {
    if (r.lo_exclusive) return fmt::format("must be > {} and at most {}", r.lo, r.hi);
    return fmt::format("must be between {} and {}", r.lo, r.hi);
  }
  return "";
}

std::string number_text_problem(const std::string& text, const NumberRule& r, double* out) {
  const std::string shown = text.size() > 40 ? text.substr(0, 40) + "..." : text;
  if (text.empty() || text.find_first_of(" \t\n") != std::string::npos) return "'" + shown + "' is not a number";
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return "'" + shown + "' is not a number";
  // strtod takes "nan", "inf" and overflows to inf: all refused by the rule as not finite.
  const std::string why = number_problem(errno == ERANGE && std::fabs(v) > 1.0 ? HUGE_VAL : v, r);
  if (!why.empty()) return shown + " " + why;
  if (out != nullptr) *out = v;
  return "";
}

}  // namespace trainbench
