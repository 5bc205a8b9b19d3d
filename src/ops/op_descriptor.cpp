#include "ops/op_descriptor.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "ops/op_kind.h"

namespace trainbench {
namespace {

int64_t default_of(const OpFieldSpec& f, const std::map<std::string, int64_t>& fields) {
  return f.same_as != nullptr ? fields.at(f.same_as) : f.value;
}

[[noreturn]] void fail(const std::string& input, const std::string& token, const std::string& why) {
  std::string msg = "bad op descriptor '" + input + "': ";
  msg += token.empty() ? why : "'" + token + "' " + why;
  const auto pos = token.empty() ? std::string::npos : input.find(token, input.find(':') + 1);
  if (pos != std::string::npos) msg += " (at column " + std::to_string(pos + 1) + ")";
  throw OpDescriptorError(msg);
}

std::string kinds_list() {
  std::string s;
  for (const auto& k : op_kind_table()) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

// Fills defaults and checks the shape; `token_of` names the text to point at for a field.
OpDescriptor complete(const std::string& input, const OpKind& spec, std::map<std::string, int64_t> given,
                      const std::map<std::string, std::string>& token_of) {
  auto token = [&](const std::string& f) {
    auto it = token_of.find(f);
    return it == token_of.end() ? std::string() : it->second;
  };
  OpDescriptor d;
  d.kind = spec.name;
  for (const auto& f : spec.fields) {
    auto it = given.find(f.name);
    if (it == given.end()) {
      if (f.required) fail(input, "", fmt::format("missing field '{}' ({})", f.name, f.meaning));
      d.fields[f.name] = default_of(f, d.fields);
    } else {
      if (it->second < f.minimum) fail(input, token(f.name), fmt::format("must be at least {}", f.minimum));
      d.fields[f.name] = it->second;
    }
  }
  if (spec.check != nullptr) {
    if (const auto problem = spec.check(d)) fail(input, token(problem->field), problem->why);
  }
  return d;
}

}  // namespace

const char* to_string(OpPhase p) {
  switch (p) {
    case OpPhase::fwd:
      return "fwd";
    case OpPhase::bwd_data:
      return "bwd_data";
    case OpPhase::bwd_weights:
      return "bwd_weights";
  }
  return "?";
}

const std::vector<OpPhase>& all_phases() {
  static const std::vector<OpPhase> p = {OpPhase::fwd, OpPhase::bwd_data, OpPhase::bwd_weights};
  return p;
}

const std::vector<std::string>& op_kinds() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> v;
    for (const auto& s : op_kind_table()) v.emplace_back(s.name);
    return v;
  }();
  return k;
}

const std::vector<OpFieldInfo>& op_fields(const std::string& kind) {
  static const std::map<std::string, std::vector<OpFieldInfo>> all = [] {
    std::map<std::string, std::vector<OpFieldInfo>> m;
    for (const auto& s : op_kind_table())
      for (const auto& f : s.fields) m[s.name].push_back({f.name, f.meaning, f.required});
    return m;
  }();
  return all.at(kind);
}

int64_t OpDescriptor::get(const std::string& field) const { return fields.at(field); }

std::string OpDescriptor::str() const {
  const OpKind* spec = find_op_kind(kind);
  std::string s = kind + ":";
  if (spec == nullptr) return s;
  for (const auto& f : spec->fields) {
    const int64_t v = fields.at(f.name);
    if (f.required || v != default_of(f, fields)) s += f.name + std::to_string(v);
  }
  return s;
}

int64_t OpDescriptor::conv_out(int dim) const {
  const char* in = dim == 0 ? "ih" : "iw";
  const char* k = dim == 0 ? "kh" : "kw";
  const char* s = dim == 0 ? "sh" : "sw";
  const char* p = dim == 0 ? "ph" : "pw";
  const char* dl = dim == 0 ? "dh" : "dw";
  const int64_t eff = get(dl) * (get(k) - 1) + 1;
  const int64_t span = get(in) + 2 * get(p) - eff;
  return span < 0 ? 0 : span / get(s) + 1;
}

// A descriptor built by hand with a kind outside the table has weights, no counted FLOPs, and its
// kind as label and family.
bool OpDescriptor::has_weights() const {
  const OpKind* k = find_op_kind(kind);
  return k == nullptr || k->has_weights;
}

double OpDescriptor::flops(OpPhase phase) const {
  const OpKind* k = find_op_kind(kind);
  return k == nullptr || k->flops == nullptr ? 0.0 : k->flops(*this, phase);
}

std::string OpDescriptor::label() const {
  const OpKind* k = find_op_kind(kind);
  return k == nullptr ? kind : k->label(*this);
}

std::string OpDescriptor::family() const {
  const OpKind* k = find_op_kind(kind);
  return k == nullptr ? kind : k->family;
}

OpDescriptor parse_op(const std::string& input) {
  const auto colon = input.find(':');
  if (colon == std::string::npos || colon == 0)
    fail(input, "", "expected KIND:FIELDS, e.g. conv:mb32ic64ih56oc64kh3ph1 (kinds: " + kinds_list() + ")");
  const std::string kind = input.substr(0, colon);
  const OpKind* spec = find_op_kind(kind);
  if (spec == nullptr) fail(input, kind, "is not an op kind (" + kinds_list() + ")");

  std::map<std::string, int64_t> given;
  std::map<std::string, std::string> token_of;
  size_t i = colon + 1;
  if (i == input.size()) fail(input, "", "no fields after '" + kind + ":'");
  while (i < input.size()) {
    const size_t start = i;
    while (i < input.size() && std::islower(static_cast<unsigned char>(input[i]))) ++i;
    const size_t digits = i;
    while (i < input.size() && std::isdigit(static_cast<unsigned char>(input[i]))) ++i;
    const std::string token = input.substr(start, i - start);
    const std::string name = input.substr(start, digits - start);
    if (name.empty()) fail(input, input.substr(start, 1), "is not a field name (lower-case letters, then a number)");
    if (digits == i) fail(input, token, "has no value (a field is a name followed by a number)");
    const bool known =
        std::any_of(spec->fields.begin(), spec->fields.end(), [&](const OpFieldSpec& f) { return name == f.name; });
    if (!known) {
      std::string names;
      for (const auto& f : spec->fields) names += (names.empty() ? "" : " ") + std::string(f.name);
      fail(input, token, "is not a field of " + kind + " (fields: " + names + ")");
    }
    if (digits + 1 < i && input[digits] == '0') fail(input, token, "has a leading zero");
    if (i - digits > 12) fail(input, token, "is too large");
    if (!given.emplace(name, std::stoll(input.substr(digits, i - digits))).second)
      fail(input, token, "repeats field '" + name + "'");
    token_of[name] = token;
  }
  return complete(input, *spec, given, token_of);
}

OpDescriptor make_op(const std::string& kind, const std::map<std::string, int64_t>& fields) {
  const OpKind* spec = find_op_kind(kind);
  if (spec == nullptr) throw OpDescriptorError("'" + kind + "' is not an op kind (" + kinds_list() + ")");
  std::string text = kind + ":";
  for (const auto& [k, v] : fields) text += k + std::to_string(v);
  for (const auto& [k, v] : fields) {
    const bool known =
        std::any_of(spec->fields.begin(), spec->fields.end(), [&](const OpFieldSpec& f) { return k == f.name; });
    if (!known) fail(text, k + std::to_string(v), "is not a field of " + kind);
  }
  return complete(text, *spec, fields, {});
}

}  // namespace trainbench
