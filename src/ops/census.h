// Takes a step's census (predict/census.h) on this machine's CPU: the workload built at two batch
// sizes, in fp32, and one training step of each watched: every operator its forward dispatches, read
// from LibTorch's operator observer, and the counting allocator's tensor peak over the step.
#pragma once
#include <cstdint>

#include "predict/census.h"
#include "workloads/workload.h"

namespace trainbench {

// `options` names the model, its parameters, the layout and the optimizer (its batch, precision and
// device are the census's own: batches `batch1` and `batch2`, fp32, the CPU). Throws
// std::invalid_argument for a workload that cannot be built, std::runtime_error when the two steps
// dispatch different operators (a model whose operators depend on the batch).
predict::StepCensus take_census(const WorkloadOptions& options, int64_t batch1 = 1, int64_t batch2 = 2);

}  // namespace trainbench
