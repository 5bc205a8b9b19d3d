// PredictionInfo <-> JSON: a predicted record's `prediction` object (docs/json-schema.md), through its
// field table. A prediction's numbers obey the same rules as a measurement's: shares are fractions, an
// interval holds its value, byte counts and batches are bounded.
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/value_rules.h"
#include "results/fields.h"

namespace trainbench {

using detail::Field;
using detail::items_field;
using detail::member_field;
using detail::Since;

namespace {

const std::vector<Field<LayerShare>>& layer_share_fields() {
  using L = LayerShare;
  static const std::vector<Field<L>> fields = {
      member_field<L>("label", &L::label),
      member_field<L>("share", &L::share).range(0, 1),
  };
  return fields;
}

const std::vector<Field<ScalingPoint>>& scaling_fields() {
  using S = ScalingPoint;
  static const std::vector<Field<S>> fields = {
      member_field<S>("gpus", &S::gpus).range(1, 1 << 20),
      member_field<S>("nodes", &S::nodes).range(1, 1 << 20),
      member_field<S>("interconnect", &S::interconnect),
      member_field<S>("step_time_s", &S::step_time_s).range(0, 1e9),
      member_field<S>("throughput", &S::throughput).range(0, 1e15),
      member_field<S>("efficiency", &S::efficiency).range(0, 1),
      member_field<S>("allreduce_s", &S::allreduce_s).range(0, 1e9),
      member_field<S>("exposed_s", &S::exposed_s).range(0, 1e9),
  };
  return fields;
}

const std::vector<Field<PredictionInfo>>& prediction_fields() {
  using P = PredictionInfo;
  constexpr double kMaxBytes = kMemorySizeBytes.hi;
  static const std::vector<Field<P>> fields = {
      member_field<P>("method", &P::method),
      member_field<P>("device_id", &P::device_id),
      member_field<P>("device_name", &P::device_name),
      member_field<P>("catalogue_source", &P::catalogue_source),
      member_field<P>("source_device", &P::source_device),
      member_field<P>("source_file", &P::source_file),
      member_field<P>("constants", &P::constants),
      member_field<P>("step_time_low_s", &P::step_time_low_s).range(0, 1e9),
      member_field<P>("step_time_high_s", &P::step_time_high_s).range(0, 1e9),
      member_field<P>("throughput_low", &P::throughput_low).range(0, 1e15),
      member_field<P>("throughput_high", &P::throughput_high).range(0, 1e15),
      member_field<P>("compute_share", &P::compute_share).range(0, 1),
      member_field<P>("memory_share", &P::memory_share).range(0, 1),
      member_field<P>("launch_share", &P::launch_share).range(0, 1),
      items_field<P, LayerShare>("slowest_layers", &P::slowest_layers, &layer_share_fields),
      member_field<P>("memory_bytes", &P::memory_bytes).range(0, kMaxBytes),
      member_field<P>("fits", &P::fits),
      member_field<P>("largest_batch", &P::largest_batch).range(0, 1e12),
      member_field<P>("largest_batch_low", &P::largest_batch_low).range(0, 1e12),
      member_field<P>("largest_batch_high", &P::largest_batch_high).range(0, 1e12),
      member_field<P>("notes", &P::notes),
      items_field<P, ScalingPoint>("scaling", &P::scaling, &scaling_fields),
  };
  return fields;
}

}  // namespace

nlohmann::json prediction_to_json(const PredictionInfo& p) { return detail::write_fields(prediction_fields(), p); }

PredictionInfo prediction_from_json(const nlohmann::json& j) {
  PredictionInfo p = detail::read_fields(prediction_fields(), j);
  detail::check_fields(prediction_fields(), p);
  if (p.method != "spec-sheet" && p.method != "profile")
    throw std::runtime_error("field \"method\": '" + p.method + "' (expected spec-sheet or profile)");
  if (p.device_id.empty()) throw std::runtime_error("field \"device_id\": empty");
  if (p.step_time_low_s > p.step_time_high_s)
    throw std::runtime_error("field \"step_time_low_s\": above step_time_high_s");
  if (p.largest_batch_low > p.largest_batch || p.largest_batch > p.largest_batch_high)
    throw std::runtime_error("field \"largest_batch\": not within largest_batch_low and largest_batch_high");
  return p;
}

const std::vector<detail::Field<PredictionInfo>>& prediction_field_table() { return prediction_fields(); }

}  // namespace trainbench
