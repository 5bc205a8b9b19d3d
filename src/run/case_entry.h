// A case's child process (`trainbench run-case DESCRIPTOR`, cli/run_case.cpp): the case read back from
// its descriptor, parsed once here as the runner printed it once there, and measured in this process.
#pragma once
#include <string>

#include "cases/case.h"
#include "results/record.h"
#include "run/settings.h"
#include "runner/child.h"

namespace trainbench {

// A case's descriptor as a child process takes it (run-case, explain-layers): parsed and validated;
// InputError when it is not one.
Case child_case(const std::string& descriptor);

// Measures `c` in this process under `settings`. With `dist.enabled` this process is one rank of the
// case: it joins the case's process group through the store of rank 0's `run` (key prefix `dist_key`)
// and measures data-parallel. Failures are values in the Record.
Record measure_in_child(const Case& c, const ChildSettings& settings, const DistOptions& dist,
                        const std::string& dist_key);

}  // namespace trainbench
