// The `trainbench` program the user types. The commands that need no tensors (compare, report, devices,
// store, board) run here, in a program that does not load LibTorch (a `store list` answers in
// milliseconds); every other command, and a board with --predict (its predicted columns build models),
// is handed to the LibTorch program beside this one, trainbench-torch, with the same arguments (exec:
// the same process, its signals and exit code). docs/architecture.md, "Two programs".
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "cli/commands.h"
#include "cli/dispatch.h"
#include "core/subprocess.h"

namespace trainbench::cli {
namespace {

std::vector<Command> add_plain_commands(CLI::App& app) {
  return {add_compare(app), add_report(app), add_devices(app), add_store(app), add_board(app)};
}

bool is_plain_command(const char* word) {
  CLI::App app;
  const std::vector<Command> commands = add_plain_commands(app);
  return std::any_of(commands.begin(), commands.end(), [&](const Command& c) { return c.app->check_name(word); });
}

}  // namespace
}  // namespace trainbench::cli

int main(int argc, char** argv) {
  using namespace trainbench::cli;
  if (argc > 1 && is_plain_command(argv[1])) {
    CommandLine line;
    line.version = std::string(TRAINBENCH_VERSION) + " (" + TRAINBENCH_GIT_REVISION + ")";
    line.add_commands = add_plain_commands;
    const int code = dispatch(argc, argv, line);
    if (code != kHandOver) return code;
  }
  std::string self = trainbench::self_executable();
  const std::string torch_program = self.substr(0, self.rfind('/') + 1) + "trainbench-torch";
  execv(torch_program.c_str(), argv);  // argv[0] stays as typed: help and messages name `trainbench`
  std::cerr << "trainbench: error: cannot start " << torch_program << " (" << std::strerror(errno)
            << "), the program that runs every command that needs LibTorch" << std::endl;
  return kExitFailure;
}
