// MemoryInfo <-> JSON: the Record's `memory` object (docs/json-schema.md).
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/value_rules.h"
#include "results/detail/json_fields.h"
#include "results/memory_info.h"

namespace trainbench {
namespace {

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::vector<int64_t> ints_from_json(const nlohmann::json& j, const char* key) {
  const auto& v = detail::field(j, key);
  if (!v.is_array()) detail::bad_type(key, "an array of integers", v);
  std::vector<int64_t> out;
  for (const auto& x : v) {
    if (!x.is_number_integer()) detail::bad_type(key, "an array of integers", x);
    out.push_back(x.get<int64_t>());
  }
  return out;
}

// Byte counts no measurement produces (negative, beyond 2^60) make the file unreadable, naming the field.
int64_t bytes_field(const nlohmann::json& j, const char* key) {
  const int64_t v = detail::get_int(j, key);
  const std::string why = number_problem(static_cast<double>(v), NumberRule{0.0, 1152921504606846976.0, false, true});
  if (!why.empty()) throw std::runtime_error(fmt::format("field \"{}\": {} {}", key, v, why));
  return v;
}

}  // namespace

nlohmann::json memory_to_json(const MemoryInfo& m) {
  nlohmann::json j = {{"source", m.source},
                      {"parameters_bytes", m.parameters_bytes},
                      {"inputs_bytes", m.inputs_bytes},
                      {"forward_live_bytes", m.forward_live_bytes},
                      {"gradients_bytes", m.gradients_bytes},
                      {"optimizer_bytes", m.optimizer_bytes},
                      {"activations_bytes_per_sample", number_or_null(m.activations_bytes_per_sample)},
                      {"fixed_bytes", m.fixed_bytes},
                      {"peak_bytes", m.peak_bytes},
                      {"max_rss_bytes", m.max_rss_bytes},
                      {"footprint_peak_bytes", m.footprint_peak_bytes}};
  if (m.fit) {
    const MemoryFit& f = *m.fit;
    j["fit"] = {{"basis", f.basis},
                {"batches", f.batches},
                {"peaks", f.peaks},
                {"fixed_bytes", number_or_null(f.fixed_bytes)},
                {"per_sample_bytes", number_or_null(f.per_sample_bytes)},
                {"linearity_error", number_or_null(f.linearity_error)},
                {"linear", f.linear}};
  } else {
    j["fit"] = nullptr;
  }
  j["predictions"] = nlohmann::json::array();
  for (const auto& p : m.predictions) {
    j["predictions"].push_back({{"size_bytes", p.size_bytes},
                                {"largest_batch", p.largest_batch},
                                {"requested_fits", p.requested_fits ? nlohmann::json(*p.requested_fits) : nlohmann::json(nullptr)},
                                {"margin_bytes", p.margin_bytes}});
  }
  j["requested_batch"] = m.requested_batch;
  j["assumptions"] = m.assumptions;
  return j;
}

MemoryInfo memory_from_json(const nlohmann::json& j) {
  using namespace detail;
  MemoryInfo m;
  m.source = get_string(j, "source");
  m.parameters_bytes = bytes_field(j, "parameters_bytes");
  m.inputs_bytes = bytes_field(j, "inputs_bytes");
  // Files written before it existed have none: 0, not measured.
  if (j.contains("forward_live_bytes")) m.forward_live_bytes = bytes_field(j, "forward_live_bytes");
  // Gradients and optimizer state are what a phase left live: an optimizer that frees more than it
  // keeps could in principle read negative, so only the magnitude is checked.
  m.gradients_bytes = get_int(j, "gradients_bytes");
  m.optimizer_bytes = get_int(j, "optimizer_bytes");
  m.activations_bytes_per_sample = get_double(j, "activations_bytes_per_sample");
  m.fixed_bytes = get_int(j, "fixed_bytes");
  m.peak_bytes = bytes_field(j, "peak_bytes");
  m.max_rss_bytes = bytes_field(j, "max_rss_bytes");
  m.footprint_peak_bytes = get_int(j, "footprint_peak_bytes");
  if (j.contains("fit") && !j["fit"].is_null()) {
    m.fit = nested("fit", [&] {
      const auto& f = j["fit"];
      MemoryFit out;
      out.basis = get_string(f, "basis");
      out.batches = ints_from_json(f, "batches");
      out.peaks = ints_from_json(f, "peaks");
      if (out.batches.size() != out.peaks.size()) throw std::runtime_error("field \"peaks\": not one per batch");
      out.fixed_bytes = get_double(f, "fixed_bytes");
      out.per_sample_bytes = get_double(f, "per_sample_bytes");
      out.linearity_error = get_double(f, "linearity_error");
      out.linear = get_bool(f, "linear");
      return out;
    });
  }
  if (j.contains("predictions")) {
    const auto& ps = field(j, "predictions");
    if (!ps.is_array()) bad_type("predictions", "an array", ps);
    for (const auto& p : ps) {
      m.predictions.push_back(nested("predictions", [&] {
        MemoryPrediction out;
        out.size_bytes = bytes_field(p, "size_bytes");
        out.largest_batch = bytes_field(p, "largest_batch");
        if (!field(p, "requested_fits").is_null()) out.requested_fits = get_bool(p, "requested_fits");
        out.margin_bytes = get_int(p, "margin_bytes");
        return out;
      }));
    }
  }
  m.requested_batch = get_int_or(j, "requested_batch", 0);
  m.assumptions = get_string_or(j, "assumptions", "");
  return m;
}

}  // namespace trainbench
