// trainbench entry point: subcommands live in src/cli/, one file each.
#include "cli/commands.h"

int main(int argc, char** argv) { return trainbench::cli::main_entry(argc, argv); }
