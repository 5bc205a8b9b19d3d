// Field tables: one description per field of a results object (Record, Context, MemoryInfo, ...) that
// drives its JSON write, its JSON read and, for the Record, its CSV column. Adding a field is one entry;
// the schema test checks the entries' keys against docs/json-schema.md.
#pragma once
#include <cmath>
#include <functional>
#include <stdexcept>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/value_rules.h"
#include "results/detail/json_fields.h"
#include "results/number_format.h"

namespace trainbench::detail {

template <class T>
struct Field {
  const char* key = nullptr;  // the JSON key; nullptr: a CSV column only (a value inside a nested object)
  // The JSON value; nullopt leaves the key out (a field written only where it applies).
  std::function<std::optional<nlohmann::json>(const T&)> write;
  // Reads the key from the object into `t`; each entry decides what a missing key means.
  std::function<void(const nlohmann::json& object, T& t)> read;
  const char* column = nullptr;  // the CSV header; nullptr: not a CSV column
  std::function<std::string(const T&)> cell;
  // The values a measurement can produce (check_fields, after reading); unset: any. `number` is the value
  // as a double, set for numeric members; `integral` says whether it must be a whole number.
  std::optional<NumberRule> rule;
  std::function<double(const T&)> number;
  bool integral = false;
  // A text field's rule (core/value_rules.h: "" for a good value, else why not) and its value; unset:
  // any text.
  std::string (*text_rule)(const std::string&) = nullptr;
  std::function<const std::string&(const T&)> text;

  // The same field as a CSV column, its cell the value's text (below), or `text` when given.
  Field csv(const char* header, std::function<std::string(const T&)> text = nullptr) && {
    column = header;
    if (text) cell = std::move(text);
    return std::move(*this);
  }
  // The same text field, its values held to `problem` (check_fields).
  template <class B>
  Field checked_text(std::string (*problem)(const std::string&), std::string B::*member) && {
    text_rule = problem;
    text = [member](const T& t) -> const std::string& { return t.*member; };
    return std::move(*this);
  }
  // The same field with the values it may take, [lo, hi] (a whole number for an integer member).
  Field range(double lo, double hi) && {
    rule = NumberRule{lo, hi, false, integral};
    return std::move(*this);
  }
};

// When a key may be missing. `always`: every file has it, a missing key is an error. `later`: added
// after schema_version 1 first shipped, so older files lack it and read as the struct's default.
enum class Since { always, later };
// How a double is written. `raw`: as it is (nlohmann prints NaN as null all the same). `or_null`: null
// itself when not finite, so that "not measured" is null in memory too.
enum class Nan { raw, or_null };

template <class M>
struct is_optional : std::false_type {};
template <class V>
struct is_optional<std::optional<V>> : std::true_type {};

template <class M>
M read_value(const nlohmann::json& j, const char* key) {
  if constexpr (std::is_same_v<M, bool>) {
    return get_bool(j, key);
  } else if constexpr (std::is_integral_v<M>) {
    return static_cast<M>(get_int(j, key));
  } else if constexpr (std::is_floating_point_v<M>) {
    return get_double(j, key);
  } else if constexpr (std::is_same_v<M, std::string>) {
    return get_string(j, key);
  } else if constexpr (std::is_same_v<M, std::optional<std::string>>) {
    return get_optional_string(j, key);
  } else if constexpr (std::is_same_v<M, std::vector<double>>) {
    return get_doubles(j, key);
  } else if constexpr (std::is_same_v<M, std::vector<int64_t>>) {
    return get_ints(j, key);
  } else if constexpr (std::is_same_v<M, std::optional<bool>>) {
    if (field(j, key).is_null()) return std::nullopt;
    return get_bool(j, key);
  } else {
    static_assert(is_optional<M>::value && std::is_integral_v<typename M::value_type>, "no JSON reader for this type");
    const auto v = get_optional_int(j, key);
    return v ? M(static_cast<typename M::value_type>(*v)) : std::nullopt;
  }
}

template <class M>
nlohmann::json write_value(const M& v, Nan nan) {
  if constexpr (is_optional<M>::value) {
    return v ? write_value(*v, nan) : nlohmann::json(nullptr);
  } else if constexpr (std::is_floating_point_v<M>) {
    return nan == Nan::or_null && !std::isfinite(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
  } else {
    return nlohmann::json(v);
  }
}

// A number in a CSV cell: the shortest text that reads back as the same double; empty when not finite.
inline std::string csv_number(double x) { return format_round_trip(x); }

// Whether a value of type M fits in one CSV cell (arrays and objects do not).
template <class M>
struct is_cell : std::bool_constant<std::is_arithmetic_v<M> || std::is_same_v<M, std::string>> {};
template <class V>
struct is_cell<std::optional<V>> : is_cell<V> {};

// A value as a CSV cell: numbers in full, booleans as true/false, an empty optional as an empty cell.
template <class M>
std::string cell_text(const M& v) {
  if constexpr (is_optional<M>::value) {
    return v ? cell_text(*v) : std::string();
  } else if constexpr (std::is_same_v<M, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_integral_v<M>) {
    return std::to_string(v);
  } else if constexpr (std::is_floating_point_v<M>) {
    return csv_number(v);
  } else {
    return v;
  }
}

// A field stored in `member` of T (or of a base of T): written and read by its type.
template <class T, class M, class B>
Field<T> member_field(const char* key, M B::*member, Since since = Since::always, Nan nan = Nan::raw) {
  Field<T> f;
  f.key = key;
  f.write = [member, nan](const T& t) -> std::optional<nlohmann::json> { return write_value(t.*member, nan); };
  f.read = [key, member, since](const nlohmann::json& j, T& t) {
    if (since == Since::later && !j.contains(key)) return;  // an older file: the default stays
    t.*member = read_value<M>(j, key);
  };
  if constexpr (is_cell<M>::value) f.cell = [member](const T& t) { return cell_text(t.*member); };
  if constexpr (std::is_arithmetic_v<M> && !std::is_same_v<M, bool>) {
    f.number = [member](const T& t) { return static_cast<double>(t.*member); };
    f.integral = std::is_integral_v<M>;
  }
  return f;
}

// A field with its own writer and reader (a nested object, an enum, an array).
template <class T>
Field<T> custom_field(const char* key, std::function<std::optional<nlohmann::json>(const T&)> write,
                      std::function<void(const nlohmann::json&, T&)> read) {
  Field<T> f;
  f.key = key;
  f.write = std::move(write);
  f.read = std::move(read);
  return f;
}

// A CSV column only: a value inside a nested object, or one derived from several fields.
template <class T>
Field<T> column_only(const char* header, std::function<std::string(const T&)> cell) {
  Field<T> f;
  f.column = header;
  f.cell = std::move(cell);
  return f;
}

// A nested object that is null when absent: `write` gives its JSON, `read` parses it; errors inside name
// the field as "key.inner". Missing or null reads as nullopt (files written before it existed).
template <class T, class V, class B>
Field<T> optional_object(const char* key, std::optional<V> B::*member, nlohmann::json (*write)(const V&),
                         V (*read)(const nlohmann::json&)) {
  return custom_field<T>(
      key,
      [member, write](const T& t) -> std::optional<nlohmann::json> {
        return t.*member ? write(*(t.*member)) : nlohmann::json(nullptr);
      },
      [key, member, read](const nlohmann::json& j, T& t) {
        if (j.contains(key) && !j[key].is_null()) t.*member = nested(key, [&] { return read(j[key]); });
      });
}

// The whole object, written by the table (keys the table leaves out are not written).
template <class T>
nlohmann::json write_fields(const std::vector<Field<T>>& fields, const T& t) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& f : fields) {
    if (!f.key) continue;
    if (auto v = f.write(t)) j[f.key] = std::move(*v);
  }
  return j;
}

// The whole object, read by the table in its order (the first bad field is the one named).
template <class T>
T read_fields(const std::vector<Field<T>>& fields, const nlohmann::json& j, T t = T{}) {
  for (const auto& f : fields)
    if (f.key) f.read(j, t);
  return t;
}

// Values no measurement can produce (a negative count, a magnitude beyond any machine, an infinity from
// a number too large for a double) make the object unreadable, naming the field (`prefix` + key). Null
// (NaN: not measured) passes.
template <class T>
void check_fields(const std::vector<Field<T>>& fields, const T& t, const std::string& prefix = "") {
  for (const auto& f : fields) {
    if (f.text_rule && f.text) {
      const std::string why = f.text_rule(f.text(t));
      if (!why.empty()) throw std::runtime_error(fmt::format("field \"{}{}\": {}", prefix, f.key, why));
    }
    if (!f.rule || !f.number) continue;
    const double v = f.number(t);
    if (std::isnan(v)) continue;
    const std::string why = number_problem(v, *f.rule);
    if (!why.empty()) throw std::runtime_error(fmt::format("field \"{}{}\": {} {}", prefix, f.key, v, why));
  }
}

// The JSON keys of a table, each prefixed: for the schema test.
template <class T>
std::vector<std::string> field_keys(const std::vector<Field<T>>& fields, const std::string& prefix = "") {
  std::vector<std::string> keys;
  for (const auto& f : fields)
    if (f.key) keys.push_back(prefix + f.key);
  return keys;
}

// An array field of objects that `fields` reads and writes (`check`: a rule across one item's fields).
// Absent: left empty (files written before it).
template <class T, class Item>
Field<T> items_field(const char* key, std::vector<Item> T::*member, const std::vector<Field<Item>>& (*fields)(),
                     void (*check)(const Item&) = nullptr) {
  return custom_field<T>(
      key,
      [member, fields](const T& t) -> std::optional<nlohmann::json> {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& item : t.*member) out.push_back(write_fields(fields(), item));
        return out;
      },
      [key, member, fields, check](const nlohmann::json& j, T& t) {
        if (!j.contains(key)) return;
        const auto& items = field(j, key);
        if (!items.is_array()) bad_type(key, "an array", items);
        for (const auto& item : items)
          (t.*member).push_back(nested(key, [&] {
            Item r = read_fields(fields(), item);
            check_fields(fields(), r);
            if (check) check(r);
            return r;
          }));
      });
}

}  // namespace trainbench::detail
