// Record <-> JSON. The field names are the contract documented in docs/json-schema.md.
#include "results/record.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/value_rules.h"

#include "results/detail/json_fields.h"

namespace trainbench {

const char* to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::oom: return "oom";
    case Status::error: return "error";
  }
  return "error";
}

Status status_from_string(const std::string& s) {
  if (s == "ok") return Status::ok;
  if (s == "oom") return Status::oom;
  if (s == "error") return Status::error;
  throw std::invalid_argument("unknown status \"" + s + "\" (expected ok, oom or error)");
}

namespace detail {

nlohmann::json summary_to_json(const Summary& s) {
  auto finite_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"median", s.median},
          {"mean", s.mean},
          {"stddev", s.stddev},
          {"min", s.min},
          {"max", s.max},
          {"jitter", s.jitter},
          {"n", s.n},
          {"median_noise", finite_or_null(s.median_noise)},
          {"lag1_autocorrelation", finite_or_null(s.lag1_autocorrelation)}};
}

Summary summary_from_json(const nlohmann::json& j) {
  using namespace detail;
  Summary s;
  s.median = get_double(j, "median");
  s.mean = get_double(j, "mean");
  s.stddev = get_double(j, "stddev");
  s.min = get_double(j, "min");
  s.max = get_double(j, "max");
  s.jitter = get_double(j, "jitter");
  s.n = get_int(j, "n");
  // Added later: older files lack them (null: under 2 or 3 samples).
  s.median_noise = get_double_or(j, "median_noise", std::numeric_limits<double>::quiet_NaN());
  s.lag1_autocorrelation = get_double_or(j, "lag1_autocorrelation", std::numeric_limits<double>::quiet_NaN());
  return s;
}

}  // namespace detail

namespace {

nlohmann::json dist_to_json(const DistInfo& d) {
  return {{"world_size", d.world_size},
          {"backend", d.backend},
          {"rank_step_time_s", d.rank_step_time_s},
          {"rank_comm_share", d.rank_comm_share},
          {"comm_share", d.comm_share},
          {"comm_total_share", d.comm_total_share},
          {"bucket_bytes", d.bucket_bytes},
          {"buckets", d.buckets},
          {"single_process_throughput", d.single_process_throughput},
          {"scaling_efficiency", d.scaling_efficiency}};
}

std::vector<double> numbers_from_json(const nlohmann::json& j, const char* key) {
  const auto& v = detail::field(j, key);
  if (!v.is_array()) detail::bad_type(key, "an array of numbers", v);
  std::vector<double> out;
  for (const auto& x : v) {
    if (x.is_null()) {
      out.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    if (!x.is_number()) detail::bad_type(key, "an array of numbers", x);
    out.push_back(x.get<double>());
  }
  return out;
}

DistInfo dist_from_json(const nlohmann::json& j) {
  using namespace detail;
  DistInfo d;
  d.world_size = static_cast<int>(get_int(j, "world_size"));
  d.backend = get_string(j, "backend");
  d.rank_step_time_s = numbers_from_json(j, "rank_step_time_s");
  d.rank_comm_share = numbers_from_json(j, "rank_comm_share");
  d.comm_share = get_double(j, "comm_share");
  d.comm_total_share = get_double(j, "comm_total_share");
  d.bucket_bytes = get_int(j, "bucket_bytes");
  d.buckets = get_int(j, "buckets");
  d.single_process_throughput = get_double(j, "single_process_throughput");
  d.scaling_efficiency = get_double(j, "scaling_efficiency");
  return d;
}

nlohmann::json data_to_json(const DataInfo& d) {
  return {{"source", d.source},
          {"kind", d.kind},
          {"files", d.files},
          {"loader_threads", d.loader_threads},
          {"loader_samples_s", d.loader_samples_s},
          {"loader_mb_s", d.loader_mb_s},
          {"model_samples_s", d.model_samples_s},
          {"mean_wait_s", d.mean_wait_s},
          {"median_wait_s", d.median_wait_s},
          {"wait_share", d.wait_share},
          {"median_copy_s", d.median_copy_s},
          {"transfer", d.transfer},
          {"skipped_files", d.skipped_files},
          {"first_skipped", d.first_skipped.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.first_skipped)},
          {"verdict", d.verdict},
          {"threads_needed", d.threads_needed}};
}

DataInfo data_from_json(const nlohmann::json& j) {
  using namespace detail;
  DataInfo d;
  d.source = get_string(j, "source");
  d.kind = get_string(j, "kind");
  d.files = get_int(j, "files");
  d.loader_threads = static_cast<int>(get_int(j, "loader_threads"));
  d.loader_samples_s = get_double(j, "loader_samples_s");
  d.loader_mb_s = get_double(j, "loader_mb_s");
  d.model_samples_s = get_double(j, "model_samples_s");
  d.mean_wait_s = get_double(j, "mean_wait_s");
  d.median_wait_s = get_double(j, "median_wait_s");
  d.wait_share = get_double(j, "wait_share");
  // Files from before the device copy was measured: no copy wait, batches sent as floats.
  if (j.contains("median_copy_s")) d.median_copy_s = get_double(j, "median_copy_s");
  if (j.contains("transfer")) d.transfer = get_string(j, "transfer");
  d.skipped_files = get_int(j, "skipped_files");
  d.first_skipped = get_optional_string_or_none(j, "first_skipped").value_or("");
  d.verdict = get_string(j, "verdict");
  d.threads_needed = static_cast<int>(get_int(j, "threads_needed"));
  return d;
}

// Values no measurement can produce (a negative batch or throughput, a magnitude beyond any machine, an
// infinity from a number too large for a double) make the record unreadable, naming the field, so that
// printers, comparisons and reports never see them. Null (NaN: not measured) passes.
void check_values(const Record& r) {
  auto check = [](const char* field, double v, double lo, double hi, bool integer = false) {
    if (std::isnan(v)) return;
    const std::string why = number_problem(v, NumberRule{lo, hi, false, integer});
    if (!why.empty()) throw std::runtime_error(fmt::format("field \"{}\": {} {}", field, v, why));
  };
  check("batch_size", static_cast<double>(r.batch_size), 0, 1e12, true);  // 0: not set (a default Record)
  check("threads", r.threads, kThreadCount.lo, kThreadCount.hi, true);
  check("throughput", r.throughput, 0, 1e15);
  check("tokens_per_s", r.tokens_per_s, 0, 1e18);
  const Summary& t = r.step_time_s;
  for (const auto& [name, v] : {std::make_pair("step_time_s.median", t.median), std::make_pair("step_time_s.mean", t.mean),
                                std::make_pair("step_time_s.stddev", t.stddev), std::make_pair("step_time_s.min", t.min),
                                std::make_pair("step_time_s.max", t.max), std::make_pair("step_time_s.jitter", t.jitter)}) {
    check(name, v, 0, 1e9);
  }
  check("step_time_s.n", static_cast<double>(t.n), 0, 1e12, true);
  for (double v : r.samples_s) check("samples_s", v, 0, 1e9);
  check("warmup_steps", static_cast<double>(r.warmup_steps), 0, 1e12, true);
  check("warmup_time_s", r.warmup_time_s, 0, 1e9);
  check("wall_time_s", r.wall_time_s, 0, 1e9);
  check("flops_per_step", r.flops_per_step, 0, 1e24);
  check("achieved_gflops", r.achieved_gflops, 0, 1e15);
  check("percent_of_peak", r.percent_of_peak, 0, 1e6);
  check("model_flops_per_step", r.model_flops_per_step, 0, 1e24);
  check("hardware_flops_per_step", r.hardware_flops_per_step, 0, 1e24);
  check("mfu", r.mfu, 0, 1e4);
  check("hfu", r.hfu, 0, 1e4);
  check("parameters", static_cast<double>(r.parameters), 0, 1e15, true);
  check("model_file_bytes", static_cast<double>(r.model_file_bytes), 0, 1e15, true);
  if (!r.model_file_sha256.empty() &&
      (r.model_file_sha256.size() != 64 || r.model_file_sha256.find_first_not_of("0123456789abcdef") != std::string::npos)) {
    throw std::runtime_error("field \"model_file_sha256\": '" + r.model_file_sha256 + "' is not 64 lower-case hex digits");
  }
  check("peak_memory_bytes", static_cast<double>(r.peak_memory_bytes), -1, 1e18, true);  // -1: unknown
  check("peak_reserved_bytes", static_cast<double>(r.peak_reserved_bytes), -1, 1e18, true);
  check("skipped_steps", static_cast<double>(r.skipped_steps), 0, 1e12, true);
  check("throttled_samples", static_cast<double>(r.throttled_samples), 0, 1e12, true);
  if (r.dist) check("dist.world_size", r.dist->world_size, 1, 1e7, true);
  if (r.data) {
    check("data.files", static_cast<double>(r.data->files), 0, 1e15, true);
    check("data.loader_threads", r.data->loader_threads, 0, kThreadCount.hi, true);
    check("data.wait_share", r.data->wait_share, 0, 1);
    check("data.mean_wait_s", r.data->mean_wait_s, 0, 1e9);
    check("data.skipped_files", static_cast<double>(r.data->skipped_files), 0, 1e15, true);
  }
}

}  // namespace

nlohmann::json to_json(const Record& r) {
  nlohmann::json j;
  j["name"] = r.name;
  j["model"] = r.model;
  j["params"] = nlohmann::json::object();
  for (const auto& [k, v] : r.params) j["params"][k] = v;
  j["batch_size"] = r.batch_size;
  j["device"] = r.device;
  j["precision"] = r.precision;
  j["layout"] = r.layout;
  j["optimizer"] = r.optimizer;
  j["forward_only"] = r.forward_only;
  j["threads"] = r.threads;
  j["status"] = to_string(r.status);
  j["error"] = r.error;
  j["throughput"] = r.throughput;
  j["unit"] = r.unit;
  j["step_time_s"] = detail::summary_to_json(r.step_time_s);
  j["samples_s"] = r.samples_s;
  j["warmup_steps"] = r.warmup_steps;
  j["stop_reason"] = r.stop_reason;
  j["noise_target"] = std::isfinite(r.noise_target) ? nlohmann::json(r.noise_target) : nlohmann::json(nullptr);
  j["noise_target_met"] = r.noise_target_met ? nlohmann::json(*r.noise_target_met) : nlohmann::json(nullptr);
  j["flops_per_step"] = r.flops_per_step;
  j["achieved_gflops"] = r.achieved_gflops;
  j["percent_of_peak"] = std::isfinite(r.percent_of_peak) ? nlohmann::json(r.percent_of_peak) : nlohmann::json();
  j["parameters"] = r.parameters;
  j["peak_memory_bytes"] = r.peak_memory_bytes;
  j["wall_time_s"] = r.wall_time_s;
  j["tokens_per_s"] = r.tokens_per_s;
  j["warmup_time_s"] = r.warmup_time_s;
  j["peak_reserved_bytes"] = r.peak_reserved_bytes;
  j["tf32"] = r.tf32;
  j["algorithm_search"] = r.algorithm_search;
  j["skipped_steps"] = r.skipped_steps;
  // Not measured: null itself (a NaN would also print as null, but compare unequal in memory).
  auto number_or_null = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  j["loss_scale"] = number_or_null(r.loss_scale);
  j["mean_sm_clock_mhz"] = number_or_null(r.mean_sm_clock_mhz);
  j["throttled_samples"] = r.throttled_samples;
  j["energy_j_per_sample"] = number_or_null(r.energy_j_per_sample);
  j["mean_power_w"] = number_or_null(r.mean_power_w);
  j["energy_source"] = r.energy_source ? nlohmann::json(*r.energy_source) : nlohmann::json(nullptr);
  j["dist"] = r.dist ? dist_to_json(*r.dist) : nlohmann::json(nullptr);
  j["model_flops_per_step"] = r.model_flops_per_step;
  j["hardware_flops_per_step"] = r.hardware_flops_per_step;
  j["mfu"] = number_or_null(r.mfu);
  j["hfu"] = number_or_null(r.hfu);
  j["data"] = r.data ? data_to_json(*r.data) : nlohmann::json(nullptr);
  j["memory"] = r.memory ? memory_to_json(*r.memory) : nlohmann::json(nullptr);
  // Only TorchScript models name a file; rows of built-in models stay as they were.
  if (!r.model_file_sha256.empty()) {
    j["model_file_bytes"] = r.model_file_bytes;
    j["model_file_sha256"] = r.model_file_sha256;
  }
  return j;
}

Record record_from_json(const nlohmann::json& j) {
  using namespace detail;
  if (!j.is_object()) throw std::runtime_error(std::string("expected a benchmark object, got ") + j.type_name());
  Record r;
  r.name = get_string(j, "name");
  r.model = get_string(j, "model");
  const auto& params = field(j, "params");
  if (!params.is_object()) bad_type("params", "an object", params);
  for (const auto& [k, v] : params.items()) {
    if (!v.is_string()) throw std::runtime_error("field \"params." + k + "\": expected a string, got " + v.type_name());
    r.params[k] = v.get<std::string>();
  }
  r.batch_size = get_int(j, "batch_size");
  r.device = get_string(j, "device");
  r.precision = get_string(j, "precision");
  r.layout = get_string(j, "layout");
  r.optimizer = get_string(j, "optimizer");
  r.forward_only = get_bool(j, "forward_only");
  r.threads = static_cast<int>(get_int(j, "threads"));
  const std::string status = get_string(j, "status");
  try {
    r.status = status_from_string(status);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("field \"status\": ") + e.what());
  }
  r.error = get_string(j, "error");
  r.throughput = get_double(j, "throughput");
  r.unit = get_string(j, "unit");
  r.step_time_s = nested("step_time_s", [&] { return summary_from_json(field(j, "step_time_s")); });
  const auto& samples = field(j, "samples_s");
  if (!samples.is_array()) bad_type("samples_s", "an array of numbers", samples);
  r.samples_s.reserve(samples.size());
  for (const auto& v : samples) {
    if (!v.is_number()) bad_type("samples_s", "an array of numbers", v);
    r.samples_s.push_back(v.get<double>());
  }
  r.warmup_steps = static_cast<long>(get_int(j, "warmup_steps"));
  r.stop_reason = get_string(j, "stop_reason");
  r.flops_per_step = get_double(j, "flops_per_step");
  r.achieved_gflops = get_double(j, "achieved_gflops");
  if (j.contains("percent_of_peak")) r.percent_of_peak = get_double(j, "percent_of_peak");  // newer than schema 1's first files
  r.parameters = get_int(j, "parameters");
  r.peak_memory_bytes = get_int(j, "peak_memory_bytes");
  r.wall_time_s = get_double(j, "wall_time_s");
  r.tokens_per_s = get_double(j, "tokens_per_s");
  r.warmup_time_s = get_double(j, "warmup_time_s");
  // Added later: older files lack them.
  r.peak_reserved_bytes = get_int_or(j, "peak_reserved_bytes", 0);
  r.tf32 = get_string_or(j, "tf32", "n/a");
  r.algorithm_search = get_string_or(j, "algorithm_search", "none");
  r.skipped_steps = get_int_or(j, "skipped_steps", 0);
  r.loss_scale = get_double_or(j, "loss_scale", std::numeric_limits<double>::quiet_NaN());
  r.mean_sm_clock_mhz = get_double_or(j, "mean_sm_clock_mhz", std::numeric_limits<double>::quiet_NaN());
  r.throttled_samples = get_int_or(j, "throttled_samples", 0);
  r.noise_target = get_double_or(j, "noise_target", std::numeric_limits<double>::quiet_NaN());
  if (j.contains("noise_target_met") && !j["noise_target_met"].is_null()) r.noise_target_met = get_bool(j, "noise_target_met");
  r.energy_j_per_sample = get_double_or(j, "energy_j_per_sample", std::numeric_limits<double>::quiet_NaN());
  r.mean_power_w = get_double_or(j, "mean_power_w", std::numeric_limits<double>::quiet_NaN());
  r.energy_source = get_optional_string_or_none(j, "energy_source");
  // Files written before data parallelism have no "dist": the case ran in one process.
  if (j.contains("dist") && !j["dist"].is_null()) r.dist = nested("dist", [&] { return dist_from_json(j["dist"]); });
  // Language-model utilisation: files before it have none.
  r.model_flops_per_step = get_double_or(j, "model_flops_per_step", 0.0);
  r.hardware_flops_per_step = get_double_or(j, "hardware_flops_per_step", 0.0);
  r.mfu = get_double_or(j, "mfu", std::numeric_limits<double>::quiet_NaN());
  r.hfu = get_double_or(j, "hfu", std::numeric_limits<double>::quiet_NaN());
  // Synthetic data (and files before real data existed): null or absent.
  if (j.contains("data") && !j["data"].is_null()) r.data = nested("data", [&] { return data_from_json(j["data"]); });
  if (j.contains("memory") && !j["memory"].is_null()) r.memory = nested("memory", [&] { return memory_from_json(j["memory"]); });
  r.model_file_bytes = get_int_or(j, "model_file_bytes", 0);
  r.model_file_sha256 = get_string_or(j, "model_file_sha256", "");
  check_values(r);
  return r;
}

void to_json(nlohmann::json& j, const Record& r) { j = to_json(r); }
void from_json(const nlohmann::json& j, Record& r) { r = record_from_json(j); }

}  // namespace trainbench
