// Subcommands of the trainbench command line. Each returns the process exit code.
#pragma once
#include <string>

namespace trainbench::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;   // a case failed or something went wrong at run time
constexpr int kExitBadInput = 2;  // the user's input was wrong; nothing ran
// Not an exit code: the torch-free program (cli/front.cpp) hands the command, as typed, to the LibTorch
// one (a board's --predict builds models).
constexpr int kHandOver = -1;

int main_entry(int argc, char** argv);

// Prints "trainbench: error: <what>" as one line on stderr; returns the bad-input exit code.
int bad_input(const std::string& what);

}  // namespace trainbench::cli
