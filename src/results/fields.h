// The field tables of the results file (results/detail/field_table.h): one entry per field drives the
// JSON write, the JSON read and the CSV columns. The Record's table is in CSV column order; entries
// without a key are CSV columns taken from inside a nested object, entries without a header are JSON
// only (arrays and nested objects).
#pragma once
#include <vector>

#include "results/context.h"
#include "results/detail/field_table.h"
#include "results/memory_info.h"
#include "results/record.h"

namespace trainbench {

const std::vector<detail::Field<Record>>& record_fields();      // record_fields.cpp
const std::vector<detail::Field<Summary>>& summary_fields();    // step_time_s
const std::vector<detail::Field<DistInfo>>& dist_fields();      // dist
const std::vector<detail::Field<DataInfo>>& data_fields();      // data
const std::vector<detail::Field<MemoryInfo>>& memory_fields();  // memory (memory_json.cpp)
const std::vector<detail::Field<Context>>& context_fields();    // context (context.cpp)
const std::vector<detail::Field<PredictionInfo>>& prediction_field_table();  // prediction (prediction_json.cpp)

nlohmann::json prediction_to_json(const PredictionInfo& p);
PredictionInfo prediction_from_json(const nlohmann::json& j);

}  // namespace trainbench
