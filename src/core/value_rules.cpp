#include "core/value_rules.h"

#include <cerrno>
#include <cmath>
#include <cctype>
#include <cstdio>
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

std::string start_time_problem(const std::string& text) { return text.empty() ? "" : utc_time_problem(text); }

std::string host_name_problem(const std::string& text) {
  if (text.size() > 255) return "a host name of " + std::to_string(text.size()) + " bytes (at most 255)";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f || std::string("/\\<>&\"'`|").find(ch) != std::string::npos) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      return std::string("a host name with the character ") + hex +
             " (printable ASCII only, no space and none of / \\ < > & \" ' ` |)";
    }
  }
  return "";
}

std::string utc_time_problem(const std::string& text) {
  const std::string like = "is not a UTC date like 2026-01-31 or 2026-01-31T12:00:00Z";
  auto digits = [&text](size_t at, size_t n, int* out) {
    if (at + n > text.size()) return false;
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      v = v * 10 + (text[i] - '0');
    }
    *out = v;
    return true;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!digits(0, 4, &y) || text.size() < 10 || text[4] != '-' || !digits(5, 2, &mo) || text[7] != '-' ||
      !digits(8, 2, &d)) {
    return like;
  }
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  const int days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > days[mo - 1]) return "has no such day";
  size_t at = 10;
  if (at < text.size() && text[at] == 'T') {
    if (!digits(at + 1, 2, &h) || at + 3 >= text.size() || text[at + 3] != ':' || !digits(at + 4, 2, &mi)) return like;
    at += 6;
    if (at < text.size() && text[at] == ':') {
      if (!digits(at + 1, 2, &s)) return like;
      at += 3;
    }
    if (h > 23 || mi > 59 || s > 59) return "has no such time of day";
  }
  if (at < text.size() && text[at] == 'Z') ++at;
  return at == text.size() ? "" : like;
}

std::string size_text_problem(const std::string& text, int64_t* bytes) {
  const std::string shown = text.size() > 40 ? text.substr(0, 40) + "..." : text;
  const std::string bad = "'" + shown + "' is not a size like 8G, 16 GiB or 512M";
  // The number: digits with an optional fraction (no sign, exponent, nan or inf: none is a size).
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0 || i > 30) return bad;
  char* end = nullptr;
  const std::string number = text.substr(0, i);
  const double v = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return bad;
  size_t u = i;
  if (u < text.size() && text[u] == ' ') ++u;
  std::string unit;
  for (; u < text.size(); ++u) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[u])));
  double mult = 0.0;
  const double k = 1024.0;
  if (unit.empty() || unit == "b")
    mult = 1.0;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    mult = k;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    mult = k * k;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    mult = k * k * k;
  else if (unit == "t" || unit == "tb" || unit == "tib")
    mult = k * k * k * k;
  else if (unit == "p" || unit == "pb" || unit == "pib")  // what format_bytes prints from 1024T up
    mult = k * k * k * k * k;
  if (mult == 0.0 || (unit.empty() && u > i)) return bad;  // a trailing space with no unit
  const std::string why = number_problem(v * mult, kMemorySizeBytes);
  if (!why.empty()) return shown + " " + (v * mult > 1.0 ? "must be at most 1024P" : "must be more than 0 bytes");
  if (bytes != nullptr) *bytes = static_cast<int64_t>(v * mult);
  return "";
}

std::vector<std::string> split_list(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) throw InputError("empty value in " + what + " '" + text + "'");
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string whole_number_problem(const std::string& text, int64_t* out) {
  const size_t digits = !text.empty() && text[0] == '-' ? 1 : 0;
  if (text.size() == digits || text.find_first_not_of("0123456789", digits) != std::string::npos) {
    return "expected an integer";
  }
  if (text.size() > digits + 1 && text[digits] == '0') return "expected an integer without a leading zero";
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return "expected an integer within 64 bits";
  if (out != nullptr) *out = v;
  return "";
}

std::vector<int64_t> parse_int_list(const std::string& text, const std::string& what) {
  std::vector<int64_t> out;
  for (const auto& item : split_list(text, what)) {
    int64_t v = 0;
    const std::string why = whole_number_problem(item, &v);
    if (!why.empty()) throw InputError("bad " + what + " '" + item + "' (" + why + ")");
    if (v <= 0) throw InputError("bad " + what + " " + item + " (must be > 0)");
    out.push_back(v);
  }
  return out;
}

double checked_number(const std::string& text, const NumberRule& rule, const std::string& what) {
  double v = 0.0;
  const std::string why = number_text_problem(text, rule, &v);
  if (!why.empty()) throw InputError(what + ": " + why);
  return v;
}

int64_t parse_size(const std::string& text, const std::string& what) {
  int64_t bytes = 0;
  const std::string why = size_text_problem(text, &bytes);
  if (!why.empty()) throw InputError("bad " + what + ": " + why);
  return bytes;
}

}  // namespace trainbench
