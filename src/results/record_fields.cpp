// The Record's field table and those of its nested step_time_s, dist and data objects: the JSON keys
// (docs/json-schema.md), how each is read from older files, the values a measurement can produce
// (range: anything else makes the record unreadable, record.cpp's check_values) and the CSV columns in
// their order. batch_size 0 is a default Record's (not set); byte counts -1 mean unknown.
#include <limits>
#include <stdexcept>
#include <string>

#include "core/device_text.h"
#include "core/value_rules.h"
#include "results/fields.h"

namespace trainbench {

using detail::column_only;
using detail::csv_number;
using detail::custom_field;
using detail::Field;
using detail::Nan;
using detail::Since;

namespace {

template <class M, class B>
Field<Record> field(const char* key, M B::*member, Since since = Since::always, Nan nan = Nan::raw) {
  return detail::member_field<Record>(key, member, since, nan);
}

// Added after schema 1 first shipped (older files read as the default) and null when not measured.
template <class M, class B>
Field<Record> later_or_null(const char* key, M B::*member) {
  return detail::member_field<Record>(key, member, Since::later, Nan::or_null);
}

// A value of the step-time summary as a CSV column.
Field<Record> step_time(const char* header, double Summary::*member) {
  return column_only<Record>(header, [member](const Record& r) { return csv_number(r.step_time_s.*member); });
}

// A value of `data` as a CSV column, empty without `data`.
template <class M>
Field<Record> data_column(const char* header, M DataInfo::*member) {
  return column_only<Record>(header,
                             [member](const Record& r) { return r.data ? detail::cell_text((*r.data).*member) : ""; });
}

// A value of `memory` as a CSV column, empty without `memory` (not measured, older files).
template <class M>
Field<Record> memory_column(const char* header, M MemoryInfo::*member) {
  return column_only<Record>(
      header, [member](const Record& r) { return r.memory ? detail::cell_text((*r.memory).*member) : ""; });
}

// Model and hardware FLOPs are 0 where not defined (models other than language models): an empty cell.
std::string positive_or_empty(double x) { return x > 0.0 ? csv_number(x) : ""; }

Field<Record> params_field() {
  return custom_field<Record>(
             "params",
             [](const Record& r) -> std::optional<nlohmann::json> {
               nlohmann::json j = nlohmann::json::object();
               for (const auto& [k, v] : r.params) j[k] = v;
               return j;
             },
             [](const nlohmann::json& j, Record& r) {
               const auto& params = detail::field(j, "params");
               if (!params.is_object()) detail::bad_type("params", "an object", params);
               for (const auto& [k, v] : params.items()) {
                 if (!v.is_string())
                   throw std::runtime_error("field \"params." + k + "\": expected a string, got " + v.type_name());
                 r.params[k] = v.get<std::string>();
               }
             })
      .csv("params", [](const Record& r) {
        std::string s;
        for (const auto& [k, v] : r.params) s += (s.empty() ? "" : ";") + k + "=" + v;
        return s;
      });
}

Field<Record> status_field() {
  return custom_field<Record>(
             "status", [](const Record& r) -> std::optional<nlohmann::json> { return to_string(r.status); },
             [](const nlohmann::json& j, Record& r) {
               const std::string status = detail::get_string(j, "status");
               try {
                 r.status = status_from_string(status);
               } catch (const std::invalid_argument& e) {
                 throw std::runtime_error(std::string("field \"status\": ") + e.what());
               }
             })
      .csv("status", [](const Record& r) { return to_string(r.status); });
}

Field<Record> step_time_field() {
  return custom_field<Record>(
      "step_time_s",
      [](const Record& r) -> std::optional<nlohmann::json> { return detail::summary_to_json(r.step_time_s); },
      [](const nlohmann::json& j, Record& r) {
        r.step_time_s =
            detail::nested("step_time_s", [&] { return detail::summary_from_json(detail::field(j, "step_time_s")); });
      });
}

// Raw step times: every element a number (unlike dist's per-rank arrays, no null).
Field<Record> samples_field() {
  return custom_field<Record>(
      "samples_s", [](const Record& r) -> std::optional<nlohmann::json> { return r.samples_s; },
      [](const nlohmann::json& j, Record& r) {
        const auto& samples = detail::field(j, "samples_s");
        if (!samples.is_array()) detail::bad_type("samples_s", "an array of numbers", samples);
        r.samples_s.reserve(samples.size());
        for (const auto& v : samples) {
          if (!v.is_number()) detail::bad_type("samples_s", "an array of numbers", v);
          r.samples_s.push_back(v.get<double>());
        }
      });
}

// A field only some records have: no key and an empty cell where `empty` says so, so that every other
// record is written as it was before the field existed.
Field<Record> absent_when_empty(Field<Record> f, bool (*empty)(const Record&)) {
  auto write = f.write;
  f.write = [write, empty](const Record& r) { return empty(r) ? std::nullopt : write(r); };
  if (f.cell) {
    auto cell = f.cell;
    f.cell = [cell, empty](const Record& r) { return empty(r) ? "" : cell(r); };
  }
  return f;
}

// Only TorchScript models name a file; rows of built-in models stay as they were (no key, empty cells).
Field<Record> model_file_field(Field<Record> f) {
  return absent_when_empty(std::move(f), [](const Record& r) { return r.model_file_sha256.empty(); });
}

nlohmann::json dist_to_json(const DistInfo& d) { return detail::write_fields(dist_fields(), d); }
DistInfo dist_from_json(const nlohmann::json& j) { return detail::read_fields(dist_fields(), j); }
nlohmann::json data_to_json(const DataInfo& d) { return detail::write_fields(data_fields(), d); }
DataInfo data_from_json(const nlohmann::json& j) { return detail::read_fields(data_fields(), j); }

// A summary value added later: an older file without it reads as NaN (not measured), not as the
// struct's default of 0.
Field<Summary> nan_when_missing(const char* key, double Summary::*member) {
  Field<Summary> f = detail::member_field<Summary>(key, member, Since::always, Nan::or_null);
  f.read = [key, member](const nlohmann::json& j, Summary& s) {
    s.*member = j.contains(key) ? detail::get_double(j, key) : std::numeric_limits<double>::quiet_NaN();
  };
  return f;
}

std::vector<Field<Record>> make_record_fields() {
  return {
      field("name", &Record::name).csv("name"),
      field("model", &Record::model).csv("model"),
      params_field(),
      field("batch_size", &Record::batch_size).range(0, 1e12).csv("batch_size"),
      field("device", &Record::device).checked_text(&recorded_device_problem, &Record::device).csv("device"),
      field("precision", &Record::precision).csv("precision"),
      field("layout", &Record::layout).csv("layout"),
      field("optimizer", &Record::optimizer).csv("optimizer"),
      field("forward_only", &Record::forward_only).csv("forward_only"),
      field("threads", &Record::threads).range(kThreadCount.lo, kThreadCount.hi).csv("threads"),
      status_field(),
      field("error", &Record::error).csv("error"),
      field("throughput", &Record::throughput).range(0, 1e15).csv("throughput"),
      field("unit", &Record::unit).csv("unit"),
      field("tokens_per_s", &Record::tokens_per_s).range(0, 1e18).csv("tokens_per_s"),
      step_time_field(),
      step_time("step_time_median_s", &Summary::median),
      step_time("step_time_mean_s", &Summary::mean),
      step_time("step_time_stddev_s", &Summary::stddev),
      step_time("step_time_min_s", &Summary::min),
      step_time("step_time_max_s", &Summary::max),
      step_time("step_time_jitter_s", &Summary::jitter),
      column_only<Record>("step_time_n", [](const Record& r) { return std::to_string(r.step_time_s.n); }),
      samples_field(),
      field("warmup_steps", &Record::warmup_steps).range(0, 1e12).csv("warmup_steps"),
      field("warmup_time_s", &Record::warmup_time_s).range(0, 1e9).csv("warmup_time_s"),
      field("stop_reason", &Record::stop_reason).csv("stop_reason"),
      field("flops_per_step", &Record::flops_per_step).range(0, 1e24).csv("flops_per_step"),
      field("achieved_gflops", &Record::achieved_gflops).range(0, 1e15).csv("achieved_gflops"),
      later_or_null("percent_of_peak", &Record::percent_of_peak).range(0, 1e6).csv("percent_of_peak"),
      field("parameters", &Record::parameters).range(0, 1e15).csv("parameters"),
      field("peak_memory_bytes", &Record::peak_memory_bytes).range(-1, 1e18).csv("peak_memory_bytes"),
      field("wall_time_s", &Record::wall_time_s).range(0, 1e9).csv("wall_time_s"),
      field("peak_reserved_bytes", &Record::peak_reserved_bytes, Since::later)
          .range(-1, 1e18)
          .csv("peak_reserved_bytes"),
      field("tf32", &Record::tf32, Since::later).csv("tf32"),
      field("algorithm_search", &Record::algorithm_search, Since::later).csv("algorithm_search"),
      field("skipped_steps", &Record::skipped_steps, Since::later).range(0, 1e12).csv("skipped_steps"),
      // A GradScaler's scale is a float32: at most 3.4e38.
      later_or_null("loss_scale", &Record::loss_scale).range(0, 3.5e38).csv("loss_scale"),
      later_or_null("mean_sm_clock_mhz", &Record::mean_sm_clock_mhz).range(0, 1e5).csv("mean_sm_clock_mhz"),
      field("throttled_samples", &Record::throttled_samples, Since::later).range(0, 1e12).csv("throttled_samples"),
      step_time("step_time_median_noise", &Summary::median_noise),
      step_time("step_time_lag1_autocorrelation", &Summary::lag1_autocorrelation),
      later_or_null("noise_target", &Record::noise_target).range(0, 1).csv("noise_target"),  // --max-noise 0-100%
      field("noise_target_met", &Record::noise_target_met, Since::later).csv("noise_target_met"),
      // A gigajoule per sample, a megawatt: beyond any one machine's step.
      later_or_null("energy_j_per_sample", &Record::energy_j_per_sample).range(0, 1e9).csv("energy_j_per_sample"),
      later_or_null("mean_power_w", &Record::mean_power_w).range(0, 1e6).csv("mean_power_w"),
      field("energy_source", &Record::energy_source, Since::later).csv("energy_source"),
      // Files written before data parallelism have no "dist": the case ran in one process.
      detail::optional_object<Record>("dist", &Record::dist, &dist_to_json, &dist_from_json),
      // Synthetic data (and files before real data existed): null or absent.
      detail::optional_object<Record>("data", &Record::data, &data_to_json, &data_from_json),
      data_column("data_source", &DataInfo::source),
      data_column("data_wait_share", &DataInfo::wait_share),
      data_column("data_verdict", &DataInfo::verdict),
      field("model_flops_per_step", &Record::model_flops_per_step, Since::later)
          .range(0, 1e24)
          .csv("model_flops_per_step", [](const Record& r) { return positive_or_empty(r.model_flops_per_step); }),
      field("hardware_flops_per_step", &Record::hardware_flops_per_step, Since::later)
          .range(0, 1e24)
          .csv("hardware_flops_per_step", [](const Record& r) { return positive_or_empty(r.hardware_flops_per_step); }),
      later_or_null("mfu", &Record::mfu).range(0, 1e4).csv("mfu"),
      later_or_null("hfu", &Record::hfu).range(0, 1e4).csv("hfu"),
      detail::optional_object<Record>("memory", &Record::memory, &memory_to_json, &memory_from_json),
      // Predicted records only (`trainbench predict`); absent or null for every measured one.
      absent_when_empty(detail::optional_object<Record>("prediction", &Record::prediction, &prediction_to_json,
                                                        &prediction_from_json),
                        [](const Record& r) { return !r.prediction; }),
      memory_column("memory_peak_bytes", &MemoryInfo::peak_bytes),
      memory_column("memory_parameters_bytes", &MemoryInfo::parameters_bytes),
      memory_column("memory_gradients_bytes", &MemoryInfo::gradients_bytes),
      memory_column("memory_optimizer_bytes", &MemoryInfo::optimizer_bytes),
      memory_column("memory_fixed_bytes", &MemoryInfo::fixed_bytes),
      memory_column("memory_activations_bytes_per_sample", &MemoryInfo::activations_bytes_per_sample),
      memory_column("memory_max_rss_bytes", &MemoryInfo::max_rss_bytes),
      data_column("data_median_copy_s", &DataInfo::median_copy_s),
      data_column("data_transfer", &DataInfo::transfer),
      model_file_field(
          field("model_file_bytes", &Record::model_file_bytes, Since::later).range(0, 1e15).csv("model_file_bytes")),
      model_file_field(field("model_file_sha256", &Record::model_file_sha256, Since::later).csv("model_file_sha256")),
      field("still_settling", &Record::still_settling, Since::later).csv("still_settling"),
      field("memory_limit_bytes", &Record::memory_limit_bytes, Since::later)
          .range(0, kMemorySizeBytes.hi)  // 0: none
          .csv("memory_limit_bytes",
               [](const Record& r) { return r.memory_limit_bytes > 0 ? std::to_string(r.memory_limit_bytes) : ""; }),
  };
}

}  // namespace

const std::vector<Field<Record>>& record_fields() {
  static const std::vector<Field<Record>> fields = make_record_fields();
  return fields;
}

const std::vector<Field<Summary>>& summary_fields() {
  using S = Summary;
  static const std::vector<Field<Summary>> fields = {
      detail::member_field<S>("median", &S::median).range(0, 1e9),
      detail::member_field<S>("mean", &S::mean).range(0, 1e9),
      detail::member_field<S>("stddev", &S::stddev).range(0, 1e9),
      detail::member_field<S>("min", &S::min).range(0, 1e9),
      detail::member_field<S>("max", &S::max).range(0, 1e9),
      detail::member_field<S>("jitter", &S::jitter).range(0, 1e9),
      detail::member_field<S>("n", &S::n).range(0, 1e12),
      // Added later (null: under 2 or 3 samples); older files lack them and read as not measured.
      nan_when_missing("median_noise", &S::median_noise),
      nan_when_missing("lag1_autocorrelation", &S::lag1_autocorrelation),
  };
  return fields;
}

const std::vector<Field<DistInfo>>& dist_fields() {
  using D = DistInfo;
  static const std::vector<Field<DistInfo>> fields = {
      detail::member_field<D>("world_size", &D::world_size).range(1, 1e7),
      detail::member_field<D>("backend", &D::backend),
      detail::member_field<D>("rank_step_time_s", &D::rank_step_time_s),
      detail::member_field<D>("rank_comm_share", &D::rank_comm_share),
      detail::member_field<D>("comm_share", &D::comm_share),
      detail::member_field<D>("comm_total_share", &D::comm_total_share),
      detail::member_field<D>("bucket_bytes", &D::bucket_bytes),
      detail::member_field<D>("buckets", &D::buckets),
      detail::member_field<D>("single_process_throughput", &D::single_process_throughput),
      detail::member_field<D>("scaling_efficiency", &D::scaling_efficiency),
  };
  return fields;
}

const std::vector<Field<DataInfo>>& data_fields() {
  using D = DataInfo;
  static const std::vector<Field<DataInfo>> fields = {
      detail::member_field<D>("source", &D::source),
      detail::member_field<D>("kind", &D::kind),
      detail::member_field<D>("files", &D::files).range(0, 1e15),
      detail::member_field<D>("loader_threads", &D::loader_threads).range(0, kThreadCount.hi),
      detail::member_field<D>("loader_samples_s", &D::loader_samples_s),
      detail::member_field<D>("loader_mb_s", &D::loader_mb_s),
      detail::member_field<D>("model_samples_s", &D::model_samples_s),
      detail::member_field<D>("mean_wait_s", &D::mean_wait_s).range(0, 1e9),
      detail::member_field<D>("median_wait_s", &D::median_wait_s),
      detail::member_field<D>("wait_share", &D::wait_share).range(0, 1),
      // Files from before the device copy was measured: no copy wait, batches sent as floats.
      detail::member_field<D>("median_copy_s", &D::median_copy_s, Since::later),
      detail::member_field<D>("transfer", &D::transfer, Since::later),
      detail::member_field<D>("skipped_files", &D::skipped_files).range(0, 1e15),
      // null when none was skipped (and absent in older files): "" in memory.
      custom_field<D>(
          "first_skipped",
          [](const D& d) -> std::optional<nlohmann::json> {
            return d.first_skipped.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.first_skipped);
          },
          [](const nlohmann::json& j, D& d) {
            d.first_skipped = detail::get_optional_string_or_none(j, "first_skipped").value_or("");
          }),
      custom_field<D>(
          "first_skipped_reason",
          [](const D& d) -> std::optional<nlohmann::json> {
            return d.first_skipped_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.first_skipped_reason);
          },
          [](const nlohmann::json& j, D& d) {
            d.first_skipped_reason = detail::get_optional_string_or_none(j, "first_skipped_reason").value_or("");
          }),
      detail::member_field<D>("max_image_pixels", &D::max_image_pixels, Since::later).range(0, kImagePixels.hi),
      detail::member_field<D>("verdict", &D::verdict),
      detail::member_field<D>("threads_needed", &D::threads_needed),
  };
  return fields;
}

namespace detail {

nlohmann::json summary_to_json(const Summary& s) { return write_fields(summary_fields(), s); }
Summary summary_from_json(const nlohmann::json& j) { return read_fields(summary_fields(), j); }

}  // namespace detail

}  // namespace trainbench
