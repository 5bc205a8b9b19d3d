// Loading a TorchScript file (workloads/script.h), its failures as one line a user can act on.
#pragma once
#include <string>

#include <torch/script.h>

namespace trainbench {

// The line of an error that says what went wrong: its first, except for the TorchScript interpreter's,
// where it is the model's own message.
std::string message_line(const std::string& text);
// Throws std::invalid_argument for a path that names no file (missing, a folder), before anything reads it.
void load_precheck(const std::string& path);
// torch::jit::load; its failure as std::invalid_argument with one line (a newer PyTorch's file format
// or operator named as such).
torch::jit::Module load_module(const std::string& path);

}  // namespace trainbench
