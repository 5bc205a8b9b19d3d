// Strict field readers shared by the Record and Context JSON readers: every missing or mistyped field
// becomes one std::runtime_error that names the field, so a bad results file says what is wrong.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/statistics.h"

namespace trainbench::detail {

inline const nlohmann::json& field(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) throw std::runtime_error("expected a JSON object, got " + std::string(j.type_name()));
  auto it = j.find(key);
  if (it == j.end()) throw std::runtime_error(std::string("field \"") + key + "\": missing");
  return *it;
}

[[noreturn]] inline void bad_type(const char* key, const char* want, const nlohmann::json& v) {
  throw std::runtime_error(std::string("field \"") + key + "\": expected " + want + ", got " + v.type_name());
}

inline std::string get_string(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  if (!v.is_string()) bad_type(key, "a string", v);
  return v.get<std::string>();
}

inline std::optional<std::string> get_optional_string(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_string()) bad_type(key, "a string or null", v);
  return v.get<std::string>();
}

inline int64_t get_int(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  if (!v.is_number_integer()) bad_type(key, "an integer", v);
  return v.get<int64_t>();
}

inline std::optional<int64_t> get_optional_int(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number_integer()) bad_type(key, "an integer or null", v);
  return v.get<int64_t>();
}

// JSON has no NaN or infinity; nlohmann writes them as null, so null reads back as NaN.
inline double get_double(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number()) bad_type(key, "a number", v);
  return v.get<double>();
}

inline bool get_bool(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  if (!v.is_boolean()) bad_type(key, "true or false", v);
  return v.get<bool>();
}

// A field added after schema_version 1 first shipped: a file written before it lacks the key and reads
// as none; a present key must still have the right type.
inline std::optional<std::string> get_optional_string_or_none(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) ? get_optional_string(j, key) : std::nullopt;
}

// Prefixes a nested object's field errors with its own name: `field "step_time_s.median": missing`.
template <class F>
auto nested(const char* key, F&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const std::runtime_error& e) {
    std::string msg = e.what();
    const std::string prefix = "field \"";
    if (msg.rfind(prefix, 0) == 0) throw std::runtime_error(prefix + key + "." + msg.substr(prefix.size()));
    throw std::runtime_error(std::string("field \"") + key + "\": " + msg);
  }
}

// A Summary as {"median", "mean", "stddev", "min", "max", "jitter", "n", ...} (record_fields.cpp).
nlohmann::json summary_to_json(const Summary& s);
Summary summary_from_json(const nlohmann::json& j);

// An array of numbers (null reads as NaN).
inline std::vector<double> get_doubles(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  if (!v.is_array()) bad_type(key, "an array of numbers", v);
  std::vector<double> out;
  out.reserve(v.size());
  for (const auto& x : v) {
    if (x.is_null()) {
      out.push_back(std::numeric_limits<double>::quiet_NaN());
    } else if (x.is_number()) {
      out.push_back(x.get<double>());
    } else {
      bad_type(key, "an array of numbers", x);
    }
  }
  return out;
}

// An array of integers.
inline std::vector<int64_t> get_ints(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  if (!v.is_array()) bad_type(key, "an array of integers", v);
  std::vector<int64_t> out;
  for (const auto& x : v) {
    if (!x.is_number_integer()) bad_type(key, "an array of integers", x);
    out.push_back(x.get<int64_t>());
  }
  return out;
}

}  // namespace trainbench::detail
