#include "cli/commands.h"

namespace trainbench::cli {
int main_entry(int, char**) { return kExitOk; }  // replaced by the real command line
}  // namespace trainbench::cli
