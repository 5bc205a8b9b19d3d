// Record <-> JSON through the field table (record_fields.cpp), and the value checks a read record
// passes. The field names are the contract documented in docs/json-schema.md.
#include "results/record.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/value_rules.h"

#include "results/fields.h"

namespace trainbench {

const char* to_string(Status s) {
  switch (s) {
    case Status::ok:
      return "ok";
    case Status::oom:
      return "oom";
    case Status::error:
      return "error";
    case Status::predicted:
      return "predicted";
  }
  return "error";
}

Status status_from_string(const std::string& s) {
  if (s == "ok") return Status::ok;
  if (s == "oom") return Status::oom;
  if (s == "error") return Status::error;
  if (s == "predicted") return Status::predicted;
  throw std::invalid_argument("unknown status \"" + s + "\" (expected ok, oom, error or predicted)");
}

namespace {

// Values no measurement can produce make the record unreadable, naming the field, so that printers,
// comparisons and reports never see them: the ranges of the field tables, and the arrays' elements.
void check_values(const Record& r) {
  detail::check_fields(record_fields(), r);
  detail::check_fields(summary_fields(), r.step_time_s, "step_time_s.");
  for (double v : r.samples_s) {
    const std::string why = std::isnan(v) ? "" : number_problem(v, NumberRule{0, 1e9, false, false});
    if (!why.empty()) throw std::runtime_error(fmt::format("field \"samples_s\": {} {}", v, why));
  }
  if (!r.model_file_sha256.empty() &&
      (r.model_file_sha256.size() != 64 ||
       r.model_file_sha256.find_first_not_of("0123456789abcdef") != std::string::npos)) {
    throw std::runtime_error("field \"model_file_sha256\": '" + r.model_file_sha256 +
                             "' is not 64 lower-case hex digits");
  }
  if (r.predicted() != r.prediction.has_value())
    throw std::runtime_error(r.predicted() ? "field \"prediction\": missing for a predicted record"
                                           : "field \"prediction\": on a record that is not predicted");
  if (r.dist) detail::check_fields(dist_fields(), *r.dist, "dist.");
  if (r.data) detail::check_fields(data_fields(), *r.data, "data.");
}

}  // namespace

nlohmann::json to_json(const Record& r) { return detail::write_fields(record_fields(), r); }

Record record_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::runtime_error(std::string("expected a benchmark object, got ") + j.type_name());
  Record r = detail::read_fields(record_fields(), j);
  check_values(r);
  return r;
}

void to_json(nlohmann::json& j, const Record& r) { j = to_json(r); }
void from_json(const nlohmann::json& j, Record& r) { r = record_from_json(j); }

}  // namespace trainbench
