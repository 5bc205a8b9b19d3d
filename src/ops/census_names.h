// The operators a step's census (ops/census.cpp) names: which launch no kernel, which are products the
// shapes describe, which CUDA autocast runs in fp32, and attention's softmax and dropout.
#pragma once
#include <string>

namespace trainbench {

// Views, allocations and shape queries: no kernel of their own.
bool launches_nothing(const char* name);
// mm, bmm, matmul, addmm, baddbmm: FLOPs from the shapes where no op kind's reader describes them.
bool is_product(const char* name);
// Operators CUDA autocast runs in fp32 whatever their inputs' type (casting 16-bit inputs up).
bool autocast_fp32(const std::string& name);
bool is_softmax(const std::string& name);
bool is_dropout(const std::string& name);

}  // namespace trainbench
