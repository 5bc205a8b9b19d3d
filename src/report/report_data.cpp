// The report's input-pipeline section: for every case trained on --data, which side limits the step
// (docs/methodology.md, "Real data"), with the figures the verdict rests on.
#include <fmt/format.h>

#include "report/html_report.h"
#include "results/number_format.h"

namespace trainbench::detail {
namespace {

std::string cell(const std::string& text) { return "<td>" + html_escape(text) + "</td>"; }

// A number: right-aligned by the page's style (td[data-v]), which holds the exact value.
std::string number_cell(const std::string& text, double value) {
  return fmt::format("<td data-v=\"{}\">{}</td>", value, html_escape(text));
}

// What the verdict means for this case, in words: the threads it needs, or the loader's headroom.
std::string consequence(const DataInfo& d) {
  if (d.verdict == "input-bound") return fmt::format("~{} loader threads needed", d.threads_needed);
  if (d.model_samples_s <= 0.0) return "";
  return fmt::format("the loader has {}x headroom", format_significant(d.loader_samples_s / d.model_samples_s));
}

}  // namespace

std::string data_section(const std::vector<ReportRun>& runs) {
  std::string rows;
  for (const auto& run : runs) {
    for (const auto& r : run.file.benchmarks) {
      if (!r.ok() || !r.data || r.data->verdict.empty()) continue;
      const DataInfo& d = *r.data;
      std::string note = consequence(d);
      if (d.skipped_files > 0) {
        note +=
            fmt::format("{}{} file(s) skipped, first {}{}", note.empty() ? "" : "; ", d.skipped_files, d.first_skipped,
                        d.first_skipped_reason.empty() ? "" : " (" + d.first_skipped_reason + ")");
      }
      rows += "<tr>" + cell(run.label) + cell(r.name) + cell(d.source) +
              number_cell(std::to_string(d.loader_threads), d.loader_threads) +
              number_cell(format_significant(d.loader_samples_s) + " " + r.unit, d.loader_samples_s) +
              number_cell(format_significant(d.model_samples_s) + " " + r.unit, d.model_samples_s) +
              number_cell(format_significant(100.0 * d.wait_share) + "%", 100.0 * d.wait_share) + cell(d.verdict) +
              cell(note) + "</tr>\n";
    }
  }
  if (rows.empty()) return "";
  return "<h2>Input pipeline</h2>\n<p class=\"note\">Cases trained on <code>--data</code>. <i>loader</i> is what the "
         "loader threads deliver (per-thread rate × threads); <i>model</i> is what the step consumes when it does "
         "not wait (batch / median of step time less data wait); <i>wait</i> is the share of the step spent waiting "
         "for the batch. A case is input-bound when the loader delivers less than the model consumes.</p>\n"
         "<table>\n<thead><tr><th>run</th><th>case</th><th>data</th><th>loader threads</th><th>loader</th>"
         "<th>model</th><th>wait</th><th>verdict</th><th>note</th></tr></thead>\n<tbody>\n" +
         rows + "</tbody>\n</table>\n";
}

}  // namespace trainbench::detail
