// The TorchScript workload described (cases/script_spec.h): its parameters, the per-sample input and the
// target, their text and its rules.
#include <stdexcept>
#include <string>

#include "cases/descriptions.h"
#include "cases/script_spec.h"

namespace trainbench {
namespace {

// Thrown for text that is no whole number at all (the caller names what it expected instead).
struct NotANumber : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// A whole number 1..kMaxScriptDim written plainly: no sign, no leading zero (so that one value has one
// spelling, and one case one descriptor).
int64_t positive_int(const std::string& text, const std::string& what) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    throw NotANumber("'" + text + "' is not a positive integer (" + what + ")");
  }
  if (text.size() > 1 && text[0] == '0') throw std::invalid_argument(what + " " + text + " has a leading zero");
  if (text.size() > 9 || std::stoll(text) < 1 || std::stoll(text) > kMaxScriptDim) {
    throw std::invalid_argument(what + " " + text + " must be between 1 and 100000000");
  }
  return std::stoll(text);
}

}  // namespace

std::string ScriptInput::str() const {
  if (tokens) return "tokens:" + std::to_string(shape.at(0));
  std::string s;
  for (int64_t d : shape) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

ScriptInput parse_script_input(const std::string& text) {
  ScriptInput in;
  if (text.rfind("tokens:", 0) == 0) {
    in.tokens = true;
    in.shape = {positive_int(text.substr(7), "sequence length")};
    return in;
  }
  if (text.empty()) throw std::invalid_argument("empty input spec (expected e.g. 3x224x224 or tokens:512)");
  size_t at = 0;
  while (at <= text.size()) {
    const size_t x = text.find('x', at);
    const std::string part = text.substr(at, x == std::string::npos ? std::string::npos : x - at);
    try {
      in.shape.push_back(positive_int(part, "dimension"));
    } catch (const NotANumber&) {
      throw std::invalid_argument("'" + text +
                                  "' is not an input spec (expected dimensions like 3x224x224, or tokens:SEQ)");
    }
    if (x == std::string::npos) break;
    at = x + 1;
  }
  if (in.shape.size() > 7) throw std::invalid_argument("'" + text + "' has more than 7 dimensions");
  // A sample of more than kMaxScriptDim elements (400 MB in fp32) is no input a training step takes; the
  // product is checked before any tensor is made, so LibTorch's allocator never sees it.
  int64_t elements = 1;
  for (int64_t d : in.shape) {
    if (elements > kMaxScriptDim / d) {
      throw std::invalid_argument("'" + text + "' holds more than 100000000 elements per sample");
    }
    elements *= d;
  }
  return in;
}

std::string ScriptTarget::str() const {
  switch (kind) {
    case Kind::classes:
      return "classes:" + std::to_string(size);
    case Kind::next_token:
      return "next-token:" + std::to_string(size);
    case Kind::mse:
      break;
  }
  return "mse";
}

ScriptTarget parse_script_target(const std::string& text) {
  ScriptTarget t;
  const auto sized = [&](const std::string& prefix, ScriptTarget::Kind kind) {
    if (text.rfind(prefix, 0) != 0) return false;
    t.kind = kind;
    t.size = positive_int(text.substr(prefix.size()), prefix.substr(0, prefix.size() - 1) + " count");
    if (t.size < 2)
      throw std::invalid_argument("'" + text + "' needs at least 2 " +
                                  (kind == ScriptTarget::Kind::classes ? "classes" : "tokens"));
    return true;
  };
  if (text == "mse") return t;
  if (sized("classes:", ScriptTarget::Kind::classes) || sized("next-token:", ScriptTarget::Kind::next_token)) return t;
  throw std::invalid_argument("'" + text + "' is not a target (expected classes:K, next-token:V or mse)");
}

ScriptSpec script_spec_of(const Params& p) {
  if (p.at("file").empty() || p.at("input").empty() || p.at("target").empty()) {
    throw std::invalid_argument(
        "script needs file=, input= and target= (trainbench run --model FILE.pt --input 3x224x224 --target "
        "classes:1000)");
  }
  ScriptSpec s;
  s.file = p.at("file");
  s.input = parse_script_input(p.at("input"));
  s.target = parse_script_target(p.at("target"));
  s.vocab = std::stoll(p.at("vocab"));
  if (s.target.kind == ScriptTarget::Kind::next_token) {
    if (!s.input.tokens) throw std::invalid_argument("target next-token:V needs token input (--input tokens:SEQ)");
    if (s.vocab == 0) s.vocab = s.target.size;
    if (s.vocab != s.target.size) {
      throw std::invalid_argument("vocab " + std::to_string(s.vocab) +
                                  " differs from next-token:" + std::to_string(s.target.size));
    }
  } else if (s.input.tokens && s.vocab == 0) {
    throw std::invalid_argument("token input with target " + s.target.str() + " needs the vocabulary: --set vocab=N");
  }
  return s;
}

WorkloadInfo script_workload_info() {
  WorkloadInfo w;
  w.name = kScriptModel;
  w.family = "torchscript";
  w.unit = "images/s";
  w.input = "--input";
  w.default_batch = 32;
  w.description =
      "your own model: a TorchScript file (tools/export-model.py); trainbench run --model FILE.pt --input 3x224x224 "
      "--target classes:1000";
  const auto nonempty = [](const std::string& v) {
    if (v.empty()) throw std::invalid_argument("empty");
  };
  w.params = {
      {"file", "", "the TorchScript file (torch.jit.save)", nonempty},
      {"input", "", "one sample: CxHxW... (float) or tokens:SEQ (int64 ids)",
       [](const std::string& v) { (void)parse_script_input(v); }},
      {"target", "", "classes:K (cross-entropy), next-token:V (LM loss over the last dim) or mse",
       [](const std::string& v) { (void)parse_script_target(v); }},
      {"vocab", "0", "token ids are drawn below this (0: V of next-token:V)", int_in_range(0, kMaxScriptDim)},
  };
  // The file itself (loaded, a forward of two samples) is checked by what builds the workload
  // (workloads/registry.h, check_params), with LibTorch.
  w.check_together = [](const Params& p) { (void)script_spec_of(p); };
  return w;
}

}  // namespace trainbench
