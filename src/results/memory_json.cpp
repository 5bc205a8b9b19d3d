// MemoryInfo <-> JSON: the Record's `memory` object (docs/json-schema.md), through field tables for it,
// its `fit` and each of its `predictions`.
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/value_rules.h"
#include "results/fields.h"

namespace trainbench {

using detail::Field;
using detail::items_field;
using detail::member_field;
using detail::Nan;
using detail::Since;

namespace {

constexpr double kMaxBytes = kMemorySizeBytes.hi;  // 2^60, as a size's rule

// Byte counts no measurement produces (negative, beyond 2^60) make the file unreadable, naming the field.
// Since::later: a file written before the field existed keeps the default.
template <class T>
Field<T> bytes(const char* key, int64_t T::*member, Since since = Since::always) {
  Field<T> f = member_field<T>(key, member, since);
  f.read = [key, member, since](const nlohmann::json& j, T& t) {
    if (since == Since::later && !j.contains(key)) return;
    const int64_t v = detail::get_int(j, key);
    const std::string why = number_problem(static_cast<double>(v), NumberRule{0.0, kMaxBytes, false, true});
    if (!why.empty()) throw std::runtime_error(fmt::format("field \"{}\": {} {}", key, v, why));
    t.*member = v;
  };
  return f;
}

const std::vector<Field<MemoryFit>>& fit_fields() {
  using F = MemoryFit;
  static const std::vector<Field<F>> fields = {
      member_field<F>("basis", &F::basis),
      member_field<F>("batches", &F::batches),
      member_field<F>("peaks", &F::peaks),
      // A fitted line may cross zero below its batches, and a stepped footprint may even fall between two
      // batches: only the magnitudes of intercept and slope are bounded (a measured line is never lost).
      member_field<F>("fixed_bytes", &F::fixed_bytes, Since::always, Nan::or_null).range(-kMaxBytes, kMaxBytes),
      member_field<F>("per_sample_bytes", &F::per_sample_bytes, Since::always, Nan::or_null)
          .range(-kMaxBytes, kMaxBytes),
      member_field<F>("linearity_error", &F::linearity_error, Since::always, Nan::or_null).range(0, 1e6),
      member_field<F>("linear", &F::linear),
      member_field<F>("oom_batches", &F::oom_batches, Since::later),
      member_field<F>("set_aside_batches", &F::set_aside_batches, Since::later),
  };
  return fields;
}

const std::vector<Field<MemoryPrediction>>& prediction_fields() {
  using P = MemoryPrediction;
  static const std::vector<Field<P>> fields = {
      member_field<P>("size_bytes", &P::size_bytes).range(1, kMaxBytes),  // a prediction is for some memory
      bytes<P>("largest_batch", &P::largest_batch),
      member_field<P>("requested_fits", &P::requested_fits),  // null: no batch was requested
      member_field<P>("margin_bytes", &P::margin_bytes).range(-kMaxBytes, kMaxBytes),
      bytes<P>("largest_batch_low", &P::largest_batch_low, Since::later),  // 0: within the measured batches
      bytes<P>("largest_batch_high", &P::largest_batch_high, Since::later),
      bytes<P>("trained_under_limit", &P::trained_under_limit, Since::later),  // 0: not tried under it
      bytes<P>("out_of_memory_under_limit", &P::out_of_memory_under_limit, Since::later),
      bytes<P>("line_batch", &P::line_batch, Since::later),
  };
  return fields;
}

// The tries under a size leave the answer at or above the batch that trained and below the one that
// ran out.
void check_tried(const MemoryPrediction& p) {
  if (p.trained_under_limit > 0 && p.out_of_memory_under_limit > 0 &&
      p.out_of_memory_under_limit <= p.trained_under_limit) {
    throw std::runtime_error("field \"out_of_memory_under_limit\": not above trained_under_limit");
  }
  if (p.trained_under_limit > 0 && p.largest_batch != p.trained_under_limit) {
    throw std::runtime_error("field \"largest_batch\": not the batch that trained under the size");
  }
}

nlohmann::json fit_to_json(const MemoryFit& f) { return detail::write_fields(fit_fields(), f); }

MemoryFit fit_from_json(const nlohmann::json& j) {
  MemoryFit f = detail::read_fields(fit_fields(), j);
  detail::check_fields(fit_fields(), f);
  if (f.batches.size() != f.peaks.size()) throw std::runtime_error("field \"peaks\": not one per batch");
  return f;
}

const std::vector<Field<GpuTargetPrediction>>& gpu_prediction_fields() {
  using P = GpuTargetPrediction;
  static const std::vector<Field<P>> fields = {
      member_field<P>("size_bytes", &P::size_bytes).range(1, kMaxBytes),
      bytes<P>("largest_batch", &P::largest_batch),
      bytes<P>("largest_batch_low", &P::largest_batch_low),
      bytes<P>("largest_batch_high", &P::largest_batch_high),
  };
  return fields;
}

void check_within(const GpuTargetPrediction& p) {
  if (p.largest_batch_low > p.largest_batch || p.largest_batch > p.largest_batch_high) {
    throw std::runtime_error("field \"largest_batch\": not within largest_batch_low and largest_batch_high");
  }
}

// A card's allocator reserves at least every tensor byte, and no rule reserves a hundred times them.
const std::vector<Field<GpuTarget>>& gpu_target_fields() {
  using G = GpuTarget;
  static const std::vector<Field<G>> fields = {
      bytes<G>("context_bytes", &G::context_bytes),
      member_field<G>("reserved_per_tensor_byte", &G::reserved_per_tensor_byte).range(1, 100),
      member_field<G>("reserved_per_tensor_byte_max", &G::reserved_per_tensor_byte_max).range(1, 100),
      items_field<G, GpuTargetPrediction>("predictions", &G::predictions, &gpu_prediction_fields, &check_within),
      member_field<G>("assumptions", &G::assumptions),
  };
  return fields;
}

nlohmann::json gpu_target_to_json(const GpuTarget& g) { return detail::write_fields(gpu_target_fields(), g); }

GpuTarget gpu_target_from_json(const nlohmann::json& j) {
  GpuTarget g = detail::read_fields(gpu_target_fields(), j);
  detail::check_fields(gpu_target_fields(), g);
  if (g.reserved_per_tensor_byte_max < g.reserved_per_tensor_byte) {
    throw std::runtime_error("field \"reserved_per_tensor_byte_max\": below reserved_per_tensor_byte");
  }
  return g;
}

}  // namespace

const std::vector<Field<MemoryInfo>>& memory_fields() {
  using M = MemoryInfo;
  static const std::vector<Field<M>> fields = {
      member_field<M>("source", &M::source),
      bytes<M>("parameters_bytes", &M::parameters_bytes),
      bytes<M>("inputs_bytes", &M::inputs_bytes),
      bytes<M>("forward_live_bytes", &M::forward_live_bytes, Since::later),  // 0: not measured
      // Gradients and optimizer state are what a phase left live: an optimizer that frees more than it
      // keeps could in principle read negative, so only the magnitude is checked.
      member_field<M>("gradients_bytes", &M::gradients_bytes).range(-kMaxBytes, kMaxBytes),
      member_field<M>("optimizer_bytes", &M::optimizer_bytes).range(-kMaxBytes, kMaxBytes),
      bytes<M>("comm_buffer_bytes", &M::comm_buffer_bytes, Since::later),  // 0: not data-parallel
      member_field<M>("activations_bytes_per_sample", &M::activations_bytes_per_sample, Since::always, Nan::or_null)
          .range(-kMaxBytes, kMaxBytes),
      member_field<M>("fixed_bytes", &M::fixed_bytes).range(-kMaxBytes, kMaxBytes),
      bytes<M>("peak_bytes", &M::peak_bytes),
      bytes<M>("max_rss_bytes", &M::max_rss_bytes),
      member_field<M>("footprint_peak_bytes", &M::footprint_peak_bytes).range(0, kMaxBytes),
      bytes<M>("loader_address_space_bytes", &M::loader_address_space_bytes, Since::later),  // 0: no loader
      bytes<M>("loader_peak_bytes", &M::loader_peak_bytes, Since::later),
      detail::optional_object<M>("fit", &M::fit, &fit_to_json, &fit_from_json),
      items_field<M, MemoryPrediction>("predictions", &M::predictions, &prediction_fields, &check_tried),
      detail::optional_object<M>("gpu_target", &M::gpu_target, &gpu_target_to_json, &gpu_target_from_json),
      member_field<M>("requested_batch", &M::requested_batch, Since::later),
      member_field<M>("assumptions", &M::assumptions, Since::later),
  };
  return fields;
}

nlohmann::json memory_to_json(const MemoryInfo& m) { return detail::write_fields(memory_fields(), m); }
MemoryInfo memory_from_json(const nlohmann::json& j) {
  MemoryInfo m = detail::read_fields(memory_fields(), j);
  detail::check_fields(memory_fields(), m);
  return m;
}

}  // namespace trainbench
