// The cells of one record as the table and markdown printers show them.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/device_text.h"
#include "results/number_format.h"
#include "results/printer.h"
#include "results/printer_utilization.h"

namespace trainbench::detail {

namespace {

constexpr size_t kMaxErrorChars = 60;

// The model, and its parameters when it has some. The case descriptor already spells those compactly
// ("bert:L12,H768,S200:b256:...") so its part before the batch is used when it is there.
std::string model_cell(const Record& r) {
  std::string s = r.model.empty() ? r.name : r.model;
  const auto batch = r.name.find(":b" + std::to_string(r.batch_size) + ":");
  if (!r.params.empty() && !r.model.empty() && batch != std::string::npos && r.name.rfind(r.model + ":", 0) == 0) {
    s = r.name.substr(0, batch);
  } else if (!r.params.empty()) {
    s += " ";
    bool first = true;
    for (const auto& [k, v] : r.params) {
      s += (first ? "" : ",") + k + "=" + v;
      first = false;
    }
  }
  if (r.forward_only) s += " (fwd)";
  return s;
}

std::string status_cell(const Record& r) {
  if (r.status != Status::error) return to_string(r.status);
  std::string reason = r.error.empty() ? "unknown" : r.error;
  const auto nl = reason.find('\n');
  if (nl != std::string::npos) reason.resize(nl);
  if (display_width(reason) > kMaxErrorChars) {
    // Cut on a code point boundary.
    size_t bytes = 0, chars = 0;
    while (bytes < reason.size() && chars < kMaxErrorChars - 3) {
      ++bytes;
      while (bytes < reason.size() && (static_cast<unsigned char>(reason[bytes]) & 0xC0) == 0x80) ++bytes;
      ++chars;
    }
    reason = reason.substr(0, bytes) + "...";
  }
  return "error: " + reason;
}

bool positive(double x) { return std::isfinite(x) && x > 0.0; }

// The median's relative noise; "!" marks a row whose noise missed the target (see noise_footer).
std::string noise_cell(const Record& r) {
  const double noise = relative_noise_of_median(r.step_time_s);
  std::string s = std::isfinite(noise) ? format_significant(noise * 100.0) + "%" : "inf";
  if (r.noise_target_met == false) s += "!";
  return s;
}

}  // namespace

const std::vector<TextColumn>& table_columns() {
  static const std::vector<TextColumn> columns = {
      {"model", 20, false},  {"batch", 5, true},       {"device", 6, false},   {"precision", 9, false},
      {"layout", 6, false},  {"throughput", 16, true}, {"median ms", 9, true}, {"±jitter", 7, true},
      {"n", 4, true},        {"noise", 7, true},       {"GFLOP/s", 7, true},   {"%peak", 5, true},
      {"peak mem", 9, true}, {"status", 0, false},
  };
  return columns;
}

std::vector<std::string> table_cells(const Record& r) {
  const bool measured = r.status == Status::ok;
  const std::string dash = "-";
  const double median = r.step_time_s.median;
  std::vector<std::string> cells;
  cells.push_back(model_cell(r));
  cells.push_back(std::to_string(r.batch_size));
  cells.push_back(r.device);
  cells.push_back(r.precision);
  cells.push_back(r.layout);
  cells.push_back(measured ? format_significant(r.throughput) + " " + r.unit : dash);
  cells.push_back(measured && positive(median) ? format_significant(median * 1e3) : dash);
  cells.push_back(measured && positive(median) ? format_significant(r.step_time_s.jitter / median * 100.0) + "%"
                                               : dash);
  cells.push_back(measured ? std::to_string(r.step_time_s.n) : dash);
  cells.push_back(measured ? noise_cell(r) : dash);
  cells.push_back(measured && positive(r.achieved_gflops) ? format_significant(r.achieved_gflops) : dash);
  cells.push_back(measured && positive(r.percent_of_peak) ? format_significant(r.percent_of_peak) : dash);
  cells.push_back(measured && r.peak_memory_bytes > 0 ? format_bytes(r.peak_memory_bytes) : dash);
  cells.push_back(status_cell(r));
  return cells;
}

}  // namespace trainbench::detail

namespace trainbench {

std::string noise_footer(const std::vector<Record>& records) {
  size_t missed = 0, by_time = 0, by_steps = 0;
  double target = 0.0;
  for (const auto& r : records) {
    if (!r.ok() || r.noise_target_met != false) continue;
    ++missed;
    by_time += r.stop_reason == "max_time" ? 1 : 0;
    by_steps += r.stop_reason == "max_steps" ? 1 : 0;
    if (std::isfinite(r.noise_target)) target = std::max(target, r.noise_target);
  }
  if (missed == 0) return "";
  std::string fix;
  if (by_time > 0) fix = "raise --max-time";
  if (by_steps > 0) fix += std::string(fix.empty() ? "" : " or ") + "raise --max-steps";
  if (fix.empty()) fix = "measure longer";
  return fmt::format(
      "! {} of {} row(s) stopped on a limit before the median's noise reached the {}% target: {} "
      "(or accept more noise with --max-noise)\n",
      missed, records.size(), fmt::format("{:g}", target * 100.0), fix);
}

std::string settling_footer(const std::vector<Record>& records) {
  size_t n = 0;
  for (const auto& r : records) n += r.ok() && r.still_settling == true ? 1 : 0;
  if (n == 0) return "";
  return fmt::format(
      "! {} of {} row(s) began measuring before the step time settled (the first measured steps were over "
      "10% slower than the rest): a fixed warm-up (--warmup, or a suite's `warmup`) or --max-time ended it first; "
      "leave the warm-up unset to let it wait for the step time, or raise the one that ended it\n",
      n, records.size());
}

std::string utilization_footer(const std::vector<Record>& records) {
  std::string out;
  for (const auto& r : records) {
    if (!r.ok() || !std::isfinite(r.mfu)) continue;
    out += fmt::format("{}: MFU {}%", r.name, format_significant(100.0 * r.mfu));
    if (std::isfinite(r.hfu)) out += fmt::format(", HFU {}%", format_significant(100.0 * r.hfu));
    out += " (model FLOP/s by the PaLM formula over the measured " + r.precision + " peak)\n";
  }
  return out;
}

}  // namespace trainbench

namespace trainbench::detail {

std::string context_summary(const Context& c) {
  std::string s = c.device + ": " + c.device_name;
  if (c.device_memory_bytes && !is_cpu_device_text(c.device)) s += " (" + format_bytes(*c.device_memory_bytes) + ")";
  s += ", " + std::to_string(c.threads) + " threads";
  if (is_cpu_device_text(c.device)) s += ", BLAS " + c.blas_kind;
  if (c.onednn_version) s += ", oneDNN " + *c.onednn_version;
  if (c.cudnn_version) s += ", cuDNN " + *c.cudnn_version;
  if (c.miopen_version) s += ", MIOpen " + *c.miopen_version;
  s += ", LibTorch " + c.libtorch_version + " (" + c.build + " build)";
  s += ", trainbench " + c.trainbench_version + " (" + c.git_revision + ")";
  s += ", on " + c.hostname + " at " + c.start_time;
  return s;
}

}  // namespace trainbench::detail
