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

Command add_list(CLI::App& app);
Command add_run(CLI::App& app);
Command add_data(CLI::App& app);
Command add_make_data(CLI::App& app);
Command add_launch(CLI::App& app);
Command add_maxbatch(CLI::App& app);
Command add_memory(CLI::App& app);
Command add_compare(CLI::App& app);
Command add_report(CLI::App& app);
Command add_op(CLI::App& app);
Command add_peak(CLI::App& app);
Command add_explain(CLI::App& app);
Command add_run_case(CLI::App& app);
Command add_script_check(CLI::App& app);
Command add_store(CLI::App& app);  // cli/store.cpp
Command add_board(CLI::App& app);  // cli/board.cpp
Command add_devices(CLI::App& app);  // cli/devices.cpp
Command add_predict(CLI::App& app);  // cli/predict.cpp

// Every subcommand, in the order `trainbench --help` lists them.
std::vector<Command> add_commands(CLI::App& app);

}  // namespace trainbench::cli
