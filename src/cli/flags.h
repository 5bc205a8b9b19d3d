// Each subcommand registers its own flags (cli/flags.cpp), from the shared groups of cli/options.h.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace trainbench::cli {

// A subcommand on the command line: its CLI11 app, and what runs it once the flags are parsed (the
// options it fills live in this closure). `run` returns the exit code and throws InputError for bad
// input, as the subcommands do.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// The command table (cli/flags.cpp): every subcommand, in the order `trainbench --help` lists them. A
// subcommand is a file (cli/X.cpp: its options, its flags in add_X, its body) and a line in this table.
std::vector<Command> add_commands(CLI::App& app);

// The subcommands that need no tensors, in the torch-free `trainbench` (cli/front.cpp) as in the
// LibTorch program: each in its file.
Command add_store(CLI::App& app);    // cli/store.cpp
Command add_devices(CLI::App& app);  // cli/devices.cpp
Command add_board(CLI::App& app);    // cli/board.cpp
Command add_compare(CLI::App& app);  // cli/compare.cpp
Command add_report(CLI::App& app);   // cli/report.cpp

}  // namespace trainbench::cli
