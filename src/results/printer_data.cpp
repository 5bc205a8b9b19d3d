// The real-data footer: for each case trained on --data, which side limits it, in words.
#include <fmt/format.h>

#include "results/number_format.h"
#include "results/printer.h"

namespace trainbench {

std::string data_verdict_line(const Record& r) {
  if (!r.ok() || !r.data || r.data->verdict.empty()) return "";
  const DataInfo& d = *r.data;
  const std::string unit = r.unit;
  const std::string threads = fmt::format("{} thread{}", d.loader_threads, d.loader_threads == 1 ? "" : "s");
  std::string line;
  if (d.verdict == "input-bound") {
    line = fmt::format(
        "{}: input-bound: the loader delivers {} {} on {}; the model consumes {} {} on {} (the step "
        "waits {}% of its time); ~{} loader threads needed",
        r.name, format_significant(d.loader_samples_s), unit, threads, format_significant(d.model_samples_s), unit,
        r.device, format_significant(100.0 * d.wait_share), d.threads_needed);
  } else {
    const double headroom = d.model_samples_s > 0.0 ? d.loader_samples_s / d.model_samples_s : 0.0;
    line = fmt::format(
        "{}: compute-bound: the loader delivers {} {} on {}, {}x what the model consumes ({} {} on "
        "{}; the step waits {}% of its time)",
        r.name, format_significant(d.loader_samples_s), unit, threads, format_significant(headroom),
        format_significant(d.model_samples_s), unit, r.device, format_significant(100.0 * d.wait_share));
  }
  if (d.skipped_files > 0) {
    line += fmt::format("; {} file(s) skipped, first {}{}", d.skipped_files, d.first_skipped,
                        d.first_skipped_reason.empty() ? "" : " (" + d.first_skipped_reason + ")");
  }
  return line + "\n";
}

std::string data_footer(const std::vector<Record>& records) {
  std::string out;
  for (const auto& r : records) out += data_verdict_line(r);
  return out;
}

}  // namespace trainbench
