// The command table: every subcommand of the LibTorch program, in the order `trainbench --help` lists
// them. A subcommand is a file (cli/X.cpp: its options, its flags in add_X, its body) and a line here.
#include "cli/flags.h"

namespace trainbench::cli {

// Each in its own file (the torch-free ones in cli/flags.h).
Command add_list(CLI::App& app);            // cli/list.cpp
Command add_run(CLI::App& app);             // cli/run.cpp
Command add_data(CLI::App& app);            // cli/data.cpp
Command add_make_data(CLI::App& app);       // cli/data.cpp
Command add_launch(CLI::App& app);          // cli/launch.cpp
Command add_maxbatch(CLI::App& app);        // cli/maxbatch.cpp
Command add_memory(CLI::App& app);          // cli/memory.cpp
Command add_op(CLI::App& app);              // cli/op.cpp
Command add_peak(CLI::App& app);            // cli/peak.cpp
Command add_explain(CLI::App& app);         // cli/explain.cpp
Command add_predict(CLI::App& app);         // cli/predict.cpp
Command add_run_case(CLI::App& app);        // cli/run_case.cpp (hidden: a case's child)
Command add_script_check(CLI::App& app);    // cli/script_flags.cpp (hidden: a TorchScript file's check)
Command add_explain_layers(CLI::App& app);  // cli/explain.cpp (hidden: explain's child)

std::vector<Command> add_commands(CLI::App& app) {
  return {add_list(app),     add_run(app),      add_data(app),         add_make_data(app),     add_launch(app),
          add_maxbatch(app), add_memory(app),   add_compare(app),      add_report(app),        add_op(app),
          add_peak(app),     add_explain(app),  add_devices(app),      add_predict(app),       add_store(app),
          add_board(app),    add_run_case(app), add_script_check(app), add_explain_layers(app)};
}

}  // namespace trainbench::cli
