// The one check of a case's --data, run when the plan is made (before anything runs) and again in the
// child that builds the workload: a path that is missing, of the wrong kind for the model, an empty
// folder, or a token file with an id beyond the model's vocabulary is refused in one line naming it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "cases/workload_info.h"  // DataKind

namespace trainbench::data {

// `kind`: the workload's; `vocab`: its vocabulary size for tokens. Throws DataError. Results are cached
// per path, so a sweep scans each source once.
void check_data_source(const std::string& model, DataKind kind, const std::string& data,
                       const std::string& dtype, std::optional<int64_t> vocab);

}  // namespace trainbench::data
