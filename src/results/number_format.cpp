#include "results/number_format.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace trainbench {

std::string format_significant(double x, int digits) {
  if (!std::isfinite(x)) return "-";
  if (x == 0.0) return "0";
  // Far from 1 a fixed-point number grows long (1e300 has 301 digits): scientific notation keeps it short.
  if (std::fabs(x) >= 1e15 || std::fabs(x) < 1e-6) return fmt::format("{:.{}e}", x, std::max(0, digits - 1));
  int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(x))));
  const double scale = std::pow(10.0, digits - 1 - magnitude);
  const double rounded = std::round(x * scale) / scale;
  // Rounding may carry into the next decade (999.6 -> 1000): count decimals from the rounded value.
  if (rounded != 0.0) magnitude = static_cast<int>(std::floor(std::log10(std::fabs(rounded))));
  const int decimals = std::max(0, digits - 1 - magnitude);
  return fmt::format("{:.{}f}", rounded, decimals);
}

std::string format_bytes(int64_t bytes) {
  if (bytes < 0) return "-";
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  return format_significant(value) + " " + units[unit];
}

std::string format_size(int64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes <= 0) return format_bytes(bytes);
  int unit = 0;
  int64_t v = bytes;
  while (unit < 5 && v % 1024 == 0) {
    v /= 1024;
    ++unit;
  }
  if (unit == 0 || v >= 1024) return format_bytes(bytes);
  return fmt::format("{} {}", v, units[unit]);
}

std::string format_round_trip(double x) { return std::isfinite(x) ? fmt::format("{}", x) : ""; }

}  // namespace trainbench
