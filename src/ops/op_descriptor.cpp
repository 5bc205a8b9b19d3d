#include "ops/op_descriptor.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/flops.h"

namespace trainbench {
namespace {

// A field's default: a constant, or the value of another field ("iw" defaults to "ih").
struct FieldSpec {
  const char* name;
  const char* meaning;
  const char* same_as;  // nullptr: `value` is the default (when not required)
  int64_t value;
  bool required;
  int64_t minimum;
};

struct KindSpec {
  const char* kind;
  std::vector<FieldSpec> fields;
};

const std::vector<KindSpec>& kind_specs() {
  static const std::vector<KindSpec> k = {
      {"conv",
       {{"mb", "batch", nullptr, 0, true, 1},
        {"ic", "input channels", nullptr, 0, true, 1},
        {"ih", "input height", nullptr, 0, true, 1},
        {"iw", "input width (default: ih)", "ih", 0, false, 1},
        {"oc", "output channels", nullptr, 0, true, 1},
        {"kh", "kernel height", nullptr, 0, true, 1},
        {"kw", "kernel width (default: kh)", "kh", 0, false, 1},
        {"sh", "stride, height (default 1)", nullptr, 1, false, 1},
        {"sw", "stride, width (default: sh)", "sh", 0, false, 1},
        {"ph", "padding, height (default 0)", nullptr, 0, false, 0},
        {"pw", "padding, width (default: ph)", "ph", 0, false, 0},
        {"dh", "dilation, height (default 1)", nullptr, 1, false, 1},
        {"dw", "dilation, width (default: dh)", "dh", 0, false, 1},
        {"g", "groups (default 1; g = ic = oc is depthwise)", nullptr, 1, false, 1}}},
      {"gemm",
       {{"m", "rows of A and C", nullptr, 0, true, 1},
        {"n", "columns of B and C", nullptr, 0, true, 1},
        {"k", "columns of A, rows of B", nullptr, 0, true, 1}}},
      {"linear",
       {{"m", "rows of the input (batch x tokens)", nullptr, 0, true, 1},
        {"n", "output features", nullptr, 0, true, 1},
        {"k", "input features", nullptr, 0, true, 1}}},
      {"lstm",
       {{"mb", "batch", nullptr, 0, true, 1},
        {"t", "sequence length (time steps)", nullptr, 0, true, 1},
        {"i", "input features", nullptr, 0, true, 1},
        {"h", "hidden size", nullptr, 0, true, 1},
        {"l", "layers (default 1)", nullptr, 1, false, 1},
        {"d", "directions: 1, or 2 for bidirectional (default 1)", nullptr, 1, false, 1}}},
      {"attention",
       {{"mb", "batch", nullptr, 0, true, 1},
        {"s", "sequence length", nullptr, 0, true, 1},
        {"nh", "heads", nullptr, 0, true, 1},
        {"hd", "dimension per head", nullptr, 0, true, 1}}},
      {"bn",
       {{"mb", "batch", nullptr, 0, true, 1},
        {"ic", "channels", nullptr, 0, true, 1},
        {"ih", "height", nullptr, 0, true, 1},
        {"iw", "width (default: ih)", "ih", 0, false, 1}}},
  };
  return k;
}

const KindSpec* find_kind(const std::string& kind) {
  for (const auto& k : kind_specs())
    if (kind == k.kind) return &k;
  return nullptr;
}

int64_t default_of(const FieldSpec& f, const std::map<std::string, int64_t>& fields) {
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
  for (const auto& k : kind_specs()) s += (s.empty() ? "" : ", ") + std::string(k.kind);
  return s;
}

// Fills defaults and checks the shape; `token_of` names the text to point at for a field.
OpDescriptor complete(const std::string& input, const KindSpec& spec, std::map<std::string, int64_t> given,
                      const std::map<std::string, std::string>& token_of) {
  auto token = [&](const std::string& f) {
    auto it = token_of.find(f);
    return it == token_of.end() ? std::string() : it->second;
  };
  OpDescriptor d;
  d.kind = spec.kind;
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
  if (d.kind == "conv") {
    const int64_t g = d.get("g");
    if (d.get("ic") % g != 0 || d.get("oc") % g != 0)
      fail(input, token("g"), fmt::format("groups must divide ic ({}) and oc ({})", d.get("ic"), d.get("oc")));
    for (int dim = 0; dim < 2; ++dim) {
      if (d.conv_out(dim) < 1)
        fail(input, "", fmt::format("the kernel does not fit the padded input ({} is {})",
                                    dim == 0 ? "output height" : "output width", d.conv_out(dim)));
    }
  }
  if (d.kind == "lstm" && d.get("d") > 2) fail(input, token("d"), "must be 1 or 2 (directions)");
  return d;
}

}  // namespace

const char* to_string(OpPhase p) {
  switch (p) {
    case OpPhase::fwd: return "fwd";
    case OpPhase::bwd_data: return "bwd_data";
    case OpPhase::bwd_weights: return "bwd_weights";
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
    for (const auto& s : kind_specs()) v.emplace_back(s.kind);
    return v;
  }();
  return k;
}

const std::vector<OpFieldInfo>& op_fields(const std::string& kind) {
  static const std::map<std::string, std::vector<OpFieldInfo>> all = [] {
    std::map<std::string, std::vector<OpFieldInfo>> m;
    for (const auto& s : kind_specs())
      for (const auto& f : s.fields) m[s.kind].push_back({f.name, f.meaning, f.required});
    return m;
  }();
  return all.at(kind);
}

int64_t OpDescriptor::get(const std::string& field) const { return fields.at(field); }

std::string OpDescriptor::str() const {
  const KindSpec* spec = find_kind(kind);
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

bool OpDescriptor::has_weights() const { return kind != "attention"; }

double OpDescriptor::flops(OpPhase phase) const {
  if (kind == "conv") {
    // The same multiply-adds in every phase: data gradient is a transposed conv, weight gradient a
    // correlation of input and output gradient.
    return conv_flops(get("mb"), get("ic"), get("oc"), get("g"), {get("kh"), get("kw")}, {conv_out(0), conv_out(1)});
  }
  if (kind == "gemm" || kind == "linear") return matmul_flops(get("m"), get("n"), get("k"));
  if (kind == "lstm") {
    // Per layer and direction: the input and recurrent products of the four gates, every time step.
    // Backward does both products once more for each of data and weights.
    double f = 0.0;
    for (int64_t l = 0; l < get("l"); ++l) {
      const int64_t in = l == 0 ? get("i") : get("h") * get("d");
      f += static_cast<double>(get("d")) * matmul_flops(get("mb") * get("t"), 4 * get("h"), in + get("h"));
    }
    return f;
  }
  if (kind == "attention") {
    // Q·K^T and P·V; backward to Q, K and V is four products of the same size; no weights.
    const double one = matmul_flops(get("s"), get("s"), get("hd"), get("mb") * get("nh"));
    if (phase == OpPhase::fwd) return 2.0 * one;
    return phase == OpPhase::bwd_data ? 4.0 * one : 0.0;
  }
  return 0.0;
}

std::string OpDescriptor::label() const {
  if (kind == "conv") {
    const int64_t g = get("g");
    std::string what = "conv";
    if (g > 1 && g == get("ic")) {
      what = "depthwise conv";
    } else if (g > 1) {
      what = "grouped conv";
    } else if (get("kh") == 1 && get("kw") == 1) {
      what = "pointwise conv";
    }
    std::string s = fmt::format("{} {}x{}", what, get("kh"), get("kw"));
    if (get("sh") != 1 || get("sw") != 1) s += get("sh") == get("sw") ? fmt::format(" s{}", get("sh"))
                                                                       : fmt::format(" s{}x{}", get("sh"), get("sw"));
    if (g > 1) s += fmt::format(" g={}", g);
    return s;
  }
  if (kind == "gemm" || kind == "linear") return fmt::format("{} {}x{}x{}", kind, get("m"), get("n"), get("k"));
  if (kind == "lstm")
    return fmt::format("{}lstm {}x{} l{}", get("d") == 2 ? "bi" : "", get("i"), get("h"), get("l"));
  if (kind == "attention") return fmt::format("attention {}x{}x{}", get("nh"), get("s"), get("hd"));
  if (kind == "bn") return fmt::format("batch norm {}", get("ic"));
  return kind;
}

std::string OpDescriptor::family() const {
  if (kind == "gemm" || kind == "linear") return "matmul";
  if (kind == "bn") return "norm";
  return kind;
}

OpDescriptor parse_op(const std::string& input) {
  const auto colon = input.find(':');
  if (colon == std::string::npos || colon == 0)
    fail(input, "", "expected KIND:FIELDS, e.g. conv:mb32ic64ih56oc64kh3ph1 (kinds: " + kinds_list() + ")");
  const std::string kind = input.substr(0, colon);
  const KindSpec* spec = find_kind(kind);
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
    const bool known = std::any_of(spec->fields.begin(), spec->fields.end(),
                                   [&](const FieldSpec& f) { return name == f.name; });
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
  const KindSpec* spec = find_kind(kind);
  if (spec == nullptr) throw OpDescriptorError("'" + kind + "' is not an op kind (" + kinds_list() + ")");
  std::string text = kind + ":";
  for (const auto& [k, v] : fields) text += k + std::to_string(v);
  for (const auto& [k, v] : fields) {
    const bool known = std::any_of(spec->fields.begin(), spec->fields.end(), [&](const FieldSpec& f) { return k == f.name; });
    if (!known) fail(text, k + std::to_string(v), "is not a field of " + kind);
  }
  return complete(text, *spec, fields, {});
}

}  // namespace trainbench
