// The measuring side of a data-parallel case (inside each rank's case child): the workload with its
// initial state broadcast from rank 0, gradients averaged by a GradientAllreducer, and a measuring loop
// every rank runs in lockstep. Never prints.
#pragma once
#include "core/stopping.h"
#include "dist/env.h"
#include "dist/process_group.h"
#include "results/record.h"
#include "cases/case.h"

namespace trainbench::dist {

// Measures `c` on this rank; every rank calls it with the same case and settings. All ranks run the
// same number of steps: after each step (outside the timed region) an all-reduce agrees on the slowest
// rank's step time and elapsed time, and that is what the stopping rule sees. Each rank draws its own
// synthetic batch (seed 1000 + rank) after building the model from the common seed.
//
// On rank 0 the Record is the global one: throughput = world_size x batch / the slowest rank's median,
// step_time_s and samples_s of that rank, `dist` filled except the baseline fields (NaN). On the other
// ranks it holds their own numbers. Failures are values (status error/oom), as in measure_case; a rank
// that fails during set-up makes every rank's Record an error rather than leaving the others waiting.
Record measure_dist_case(const Case& c, const MeasureSettings& m, const CommPtr& comm, const DistEnv& e,
                         const std::string& backend, int64_t bucket_bytes);

}  // namespace trainbench::dist
