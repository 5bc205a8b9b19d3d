// The TorchScript workload's parameters, without LibTorch (workloads/script.h runs the file): the
// per-sample input and the target, their text and its rules, one spelling per value.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cases/workload_info.h"

namespace trainbench {

// The name of the workload that runs TorchScript files.
inline constexpr char kScriptModel[] = "script";

// The largest dimension of a scripted model's input, and of its elements per sample.
constexpr int64_t kMaxScriptDim = 100'000'000;

// The per-sample input of a scripted model.
struct ScriptInput {
  bool tokens = false;
  std::vector<int64_t> shape;  // one sample: {3, 224, 224}, or {seq} for tokens
  std::string str() const;
};
// Throws std::invalid_argument (one line) for text that is not an input spec.
ScriptInput parse_script_input(const std::string& text);

struct ScriptTarget {
  enum class Kind { classes, next_token, mse } kind = Kind::mse;
  int64_t size = 0;  // K or V; 0 for mse
  std::string str() const;
};
ScriptTarget parse_script_target(const std::string& text);

// A script case's parameters, read and checked together: file, input and target given, the vocabulary
// agreeing with a next-token target. Throws std::invalid_argument (one line).
struct ScriptSpec {
  std::string file;
  ScriptInput input;
  ScriptTarget target;
  int64_t vocab = 0;  // token ids are drawn below this
};
ScriptSpec script_spec_of(const Params& all);

}  // namespace trainbench
