// The LibTorch program's command line: every subcommand (cli/flags.cpp), through the dispatcher.
#include "cli/board.h"
#include "cli/commands.h"
#include "cli/dispatch.h"
#include "cli/flags.h"
#include "cli/options.h"
#include "cli/predict.h"
#include "core/subprocess.h"
#include "workloads/script.h"

namespace trainbench::cli {

int main_entry(int argc, char** argv) {
  CommandLine line;
  line.version = std::string(TRAINBENCH_VERSION) + " (" + TRAINBENCH_GIT_REVISION + ")";
  line.add_commands = add_commands;
  set_board_predictor(predict_board_columns);
  // No command runs a user's TorchScript code in this process: by default its check runs in a child
  // with a case's default timeout (the measuring commands set their own --timeout and --memory-limit).
  line.before_run = [] {
    ScriptCheckPlace place;
    place.kind = ScriptCheckPlace::Kind::child_process;
    place.executable = self_executable();
    place.timeout_s = kDefaultCaseTimeoutS;
    set_script_check_place(place);
  };
  return dispatch(argc, argv, line);
}

}  // namespace trainbench::cli
