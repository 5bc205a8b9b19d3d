// What `trainbench run` shows as its sweep goes and says when it ends (cli/run_console.cpp); the steps
// themselves are run/sweep.h's.
#pragma once
#include <memory>

#include "cli/options.h"
#include "results/journal.h"
#include "results/reporter.h"
#include "run/sweep.h"

namespace trainbench::cli {

// The console's observer: a progress line on stderr (rewritten in place on a terminal), a line per try
// of a searched batch, and each record to the reporter.
std::unique_ptr<SweepObserver> console_progress(Reporter& reporter);

// Writes the results file (run/sweep.h) and the --report, ends the reporter, removes the journal, keeps
// the run in the store and says how it went. Returns the exit code.
int write_run(const RunOptions& o, const RunPlan& plan, const Context& context, Resumed& resumed, Swept& swept,
              Journal& journal, Reporter& reporter);

}  // namespace trainbench::cli
