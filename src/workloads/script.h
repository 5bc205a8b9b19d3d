// Your own model: a TorchScript file (torch.jit.trace or torch.jit.script, saved from Python) trained
// from C++ like the zoo. The workload `script` takes three parameters that `run --model FILE.pt
// --input SPEC --target SPEC` fills in:
//   file=PATH        the module, loaded with torch::jit::load
//   input=SPEC       one sample: "3x224x224" (float, drawn from N(0,1)) or "tokens:512" (int64 ids below the vocab)
//   target=SPEC      "classes:K" (cross-entropy over [batch, K]), "next-token:V" (LM loss over [batch, seq, V],
//                    targets = the input shifted by one) or "mse" (against a fixed N(0,1) tensor of the output's shape)
//   vocab=V          token inputs with a classes or mse target (next-token:V gives it otherwise)
// A file that is missing or unloadable, saved by a newer PyTorch, without parameters, or whose output
// does not fit the target is refused when the case is validated (runner/plan.cpp), before anything runs.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "workloads/registry.h"

namespace trainbench {

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

WorkloadInfo script_workload_info();

// The name of the workload that runs TorchScript files.
inline constexpr char kScriptModel[] = "script";

// The file's size and SHA-256 when (model, params) name a TorchScript file that can be read; nullopt
// otherwise. Hashed once per file (size and modification time unchanged) in a process.
std::optional<FileDigest> script_file_digest(const std::string& model, const Params& params);

// Whether `text`, given as --model, looks like a model file rather than a workload name (ends in
// .pt/.pth/.ts/.zip or names an existing file), so the CLI can ask for --input and --target.
bool looks_like_model_file(const std::string& text);

}  // namespace trainbench
