// CSV: one header row, then one row per record with every scalar field (raw step times are left out).
// Quoting follows RFC 4180; lines end in '\n'. Numbers are written in full (shortest round-trip form).
#include <cmath>

#include <fmt/format.h>

#include "results/number_format.h"
#include "results/printer.h"

namespace trainbench {

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

namespace {

std::string num(double x) { return format_round_trip(x); }  // short: print_csv names it in every cell
// Model and hardware FLOPs are 0 where not defined (models other than language models): an empty cell.
std::string positive_or_empty(double x) { return std::isfinite(x) && x > 0.0 ? num(x) : ""; }

std::string params_text(const Record& r) {
  std::string s;
  for (const auto& [k, v] : r.params) s += (s.empty() ? "" : ";") + k + "=" + v;
  return s;
}

const char* const kHeader[] = {
    "name", "model", "params", "batch_size", "device", "precision", "layout", "optimizer", "forward_only", "threads",
    "status", "error", "throughput", "unit", "tokens_per_s", "step_time_median_s", "step_time_mean_s", "step_time_stddev_s",
    "step_time_min_s", "step_time_max_s", "step_time_jitter_s", "step_time_n", "warmup_steps", "warmup_time_s",
    "stop_reason", "flops_per_step", "achieved_gflops", "percent_of_peak", "parameters", "peak_memory_bytes", "wall_time_s",
    "peak_reserved_bytes", "tf32", "algorithm_search", "skipped_steps", "loss_scale", "mean_sm_clock_mhz",
    "throttled_samples", "step_time_median_noise", "step_time_lag1_autocorrelation", "noise_target", "noise_target_met",
    "energy_j_per_sample", "mean_power_w", "energy_source", "data_source", "data_wait_share", "data_verdict",
    "model_flops_per_step", "hardware_flops_per_step", "mfu", "hfu", "memory_peak_bytes", "memory_parameters_bytes",
    "memory_gradients_bytes", "memory_optimizer_bytes", "memory_fixed_bytes", "memory_activations_bytes_per_sample",
    "memory_max_rss_bytes", "data_median_copy_s", "data_transfer", "model_file_bytes", "model_file_sha256",
};

void append_row(std::string& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    out += csv_quote(cells[i]);
  }
  out += '\n';
}

}  // namespace

std::string print_csv(const std::vector<Record>& records) {
  std::string out;
  append_row(out, std::vector<std::string>(std::begin(kHeader), std::end(kHeader)));
  for (const auto& r : records) {
    const Summary& s = r.step_time_s;
    const MemoryInfo* m = r.memory ? &*r.memory : nullptr;  // null: not measured (older files): empty cells
    append_row(out, {r.name, r.model, params_text(r), std::to_string(r.batch_size), r.device, r.precision, r.layout,
                     r.optimizer, r.forward_only ? "true" : "false", std::to_string(r.threads), to_string(r.status),
                     r.error, num(r.throughput), r.unit, num(r.tokens_per_s), num(s.median), num(s.mean), num(s.stddev), num(s.min),
                     num(s.max), num(s.jitter), std::to_string(s.n), std::to_string(r.warmup_steps),
                     num(r.warmup_time_s), r.stop_reason,
                     num(r.flops_per_step), num(r.achieved_gflops), num(r.percent_of_peak), std::to_string(r.parameters),
                     std::to_string(r.peak_memory_bytes), num(r.wall_time_s), std::to_string(r.peak_reserved_bytes),
                     r.tf32, r.algorithm_search, std::to_string(r.skipped_steps), num(r.loss_scale),
                     num(r.mean_sm_clock_mhz), std::to_string(r.throttled_samples), num(s.median_noise),
                     num(s.lag1_autocorrelation), num(r.noise_target),
                     r.noise_target_met ? (*r.noise_target_met ? "true" : "false") : "", num(r.energy_j_per_sample),
                     num(r.mean_power_w), r.energy_source.value_or(""), r.data ? r.data->source : "",
                     r.data ? num(r.data->wait_share) : "", r.data ? r.data->verdict : "",
                     positive_or_empty(r.model_flops_per_step), positive_or_empty(r.hardware_flops_per_step),
                     num(r.mfu), num(r.hfu), m ? std::to_string(m->peak_bytes) : "",
                     m ? std::to_string(m->parameters_bytes) : "", m ? std::to_string(m->gradients_bytes) : "",
                     m ? std::to_string(m->optimizer_bytes) : "", m ? std::to_string(m->fixed_bytes) : "",
                     m ? num(m->activations_bytes_per_sample) : "", m ? std::to_string(m->max_rss_bytes) : "",
                     r.data ? num(r.data->median_copy_s) : "", r.data ? r.data->transfer : "",
                     r.model_file_sha256.empty() ? "" : std::to_string(r.model_file_bytes), r.model_file_sha256});
  }
  return out;
}

}  // namespace trainbench
