// The command line's dispatcher, without LibTorch: parses, runs the one subcommand given and turns what
// it throws into one line and an exit code. Both programs use it: the LibTorch one (cli/main_entry.cpp)
// with every subcommand, and the torch-free `trainbench` (cli/front.cpp) with the ones that need no
// tensors.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cli/flags.h"

namespace trainbench::cli {

struct CommandLine {
  std::string version;                                          // --version's text
  std::function<std::vector<Command>(CLI::App&)> add_commands;  // registers the subcommands, in --help's order
  std::function<void()> before_run;                             // after parsing, before the command (may be empty)
};

int dispatch(int argc, char** argv, const CommandLine& line);

}  // namespace trainbench::cli
