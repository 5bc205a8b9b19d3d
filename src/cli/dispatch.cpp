#include "cli/dispatch.h"

#include <algorithm>
#include <csignal>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/subprocess.h"
#include "core/value_rules.h"
#include "store/sql.h"

namespace trainbench::cli {

int bad_input(const std::string& what) {
  std::cerr << "trainbench: error: " << what << std::endl;
  return kExitBadInput;
}

namespace {

int run_command(const Command& c) {
  try {
    return c.run();
  } catch (const InputError& e) {
    return bad_input(e.what());
  } catch (const StoreInterrupted& e) {
    std::cerr << "trainbench: error: " << e.what() << std::endl;
    return interrupt_exit_code();
  } catch (const std::exception& e) {
    // Anything else at setup (an unreadable results file, a failed write): one line, not a backtrace.
    const std::string what = e.what();
    std::cerr << "trainbench: error: " << what.substr(0, what.find('\n')) << std::endl;
    return kExitFailure;
  }
}

}  // namespace

int dispatch(int argc, char** argv, const CommandLine& line) {
  // A write past the file-size limit (ulimit -f) fails with EFBIG, which each writer reports in one
  // line, instead of killing the process with SIGXFSZ halfway through a store's transaction.
  std::signal(SIGXFSZ, SIG_IGN);
  // A wait for another writer of the store is said on stderr after a second and ended by Ctrl-C or
  // SIGTERM (where the command has installed its interrupt handlers; elsewhere the signal ends it).
  set_store_wait({60000, [] { return interrupt_requested(); },
                  [](const std::string& what) { std::cerr << "trainbench: " << what << std::endl; }});
  CLI::App app{"trainbench: deep-learning training throughput on LibTorch"};
  app.require_subcommand(1);
  app.set_version_flag("--version", line.version);
  const std::vector<Command> commands = line.add_commands(app);

  // An unknown first word is most likely a mistyped command: name it (CLI11 would say "arguments not expected").
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(commands.begin(), commands.end(), [&](const Command& c) { return c.app->check_name(argv[1]); })) {
    return bad_input(fmt::format("unknown command '{}'; see trainbench --help", argv[1]));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return bad_input(e.what());
  }
  if (line.before_run) line.before_run();
  for (const Command& c : commands) {
    if (app.got_subcommand(c.app)) return run_command(c);
  }
  return kExitOk;
}

}  // namespace trainbench::cli
