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
// That check runs the user's code, so a command's main process never runs it itself: see
// ScriptCheckPlace.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cases/script_spec.h"
#include "core/sha256.h"
#include "workloads/registry.h"

namespace trainbench {

// Where the check of a TorchScript file runs (it loads the file, counts its parameters, runs a forward
// of two samples and fits the output to the target: the user's code, which may crash, hang or allocate
// without end).
struct ScriptCheckPlace {
  enum class Kind {
    this_process,   // here: the library's default, for code that builds workloads directly (tests)
    child_process,  // in `EXECUTABLE script-check ...`, killed after timeout_s (0: never), under the
                    // memory limit: what the commands set from --timeout and --memory-limit
    case_setup,     // not at validation: a case's child (run-case) checks while it builds the workload,
                    // under the case's limits, and a refusal is that case's error
  } kind = Kind::this_process;
  std::string executable;    // child_process: the trainbench binary
  double timeout_s = 0.0;    // child_process
  std::string memory_limit;  // child_process: as --memory-limit takes it ("4G"); empty: none
};
void set_script_check_place(const ScriptCheckPlace& place);

// The check itself, in this process, for `trainbench script-check`: "" when the model passes, else
// the one-line reason; *out_of_memory says whether that reason is an allocation failure.
std::string script_check_here(const Params& params, bool* out_of_memory);

// The file's size and SHA-256 when (model, params) name a TorchScript file that can be read; nullopt
// otherwise. Hashed once per file (size and modification time unchanged) in a process.
std::optional<FileDigest> script_file_digest(const std::string& model, const Params& params);

// Whether `text`, given as --model, looks like a model file rather than a workload name (ends in
// .pt/.pth/.ts/.zip or names an existing file), so the CLI can ask for --input and --target.
bool looks_like_model_file(const std::string& text);

}  // namespace trainbench
