// The HTML report: one self-contained page (Chart.js inlined, no network) built from results files.
// It holds each run's context, the speed-up chart OTHER/BASE per model, throughput against batch size,
// an ablation workload's variants (throughput and GFLOP/s; the workload registry says which), where the
// memory goes and peak memory against batch, and every case in a sortable table. docs/compare-and-report.md.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "results/results_file.h"

namespace trainbench {

// The report cannot be built (Chart.js missing, output not writable). what() is one line.
class ReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ReportRun {
  std::string label;  // the file name as given
  ResultsFile file;
};

// Where Chart.js is: $TRAINBENCH_CHARTJS when set (it must exist), else the first of
// chartjs_candidates() that exists. Throws ReportError telling to install libjs-chart.js.
std::string find_chartjs();
const std::vector<std::string>& chartjs_candidates();
// The source of find_chartjs()'s file: ReportError when it is empty or unreadable.
std::string read_chartjs();
// Writes a page (or any output file) whole: a temporary file renamed over `output`. ReportError when
// it cannot.
void write_page(const std::string& text, const std::string& output);

// The hook for a case whose median's noise missed the --max-noise target (Record::noise_target_met is
// false): its bar in a single run's throughput chart and its row in the cases table are marked "noisy".
bool noise_missed(const Record& r);

// The data the page draws from (context rows, chart series, table rows), computed here so the page's
// script only draws. The first run is BASE.
nlohmann::json report_model(const std::vector<ReportRun>& runs);

// The whole page. `chartjs` is the library's source text, inlined.
std::string html_report(const std::vector<ReportRun>& runs, const std::string& chartjs);

// Reads the results files (ResultsError for a bad one), finds Chart.js and writes the page to `output`
// (ReportError when it cannot).
void write_html_report(const std::vector<std::string>& inputs, const std::string& output);
// The same from runs already read (results files, or runs from the store).
void write_html_report(const std::vector<ReportRun>& runs, const std::string& output);

namespace detail {
// The page with its holes filled: title, data model (JSON), body, the Chart.js source, and the page's own
// drawing script, run inside the shared script with its helpers (section, addChart, fmt, color; the
// sortable tables and the status line are shared): the report's memory charts when null.
std::string fill_report_template(const std::string& title, const std::string& model_json, const std::string& body_html,
                                 const std::string& chartjs, const char* page_script = nullptr);
std::string html_escape(const std::string& s);
// JSON text made safe inside <script>: <, >, & and U+2028/U+2029 written as \uXXXX escapes.
std::string json_script_safe(const std::string& json);
// The workload of a record without its batch (the join key less ":bN"): what a batch sweep varies.
std::string sweep_key(const Record& r);
// The memory charts (report_memory.cpp): one stacked bar per case with a `memory` breakdown (a `memory`
// run's fitted record standing for its measured batches), null when no record has one; and one
// chart per fit (measured peaks, the fitted line, each --fits size), empty without fits.
nlohmann::json memory_breakdown_model(const std::vector<ReportRun>& runs);
nlohmann::json memory_fit_model(const std::vector<ReportRun>& runs);
// The script that draws them, run inside the page's script with its helpers.
const char* memory_charts_script();
// The input-pipeline section (report_data.cpp): one row per case trained on --data with its verdict,
// input-bound or compute-bound, and the figures behind it; "" when no case has real data.
std::string data_section(const std::vector<ReportRun>& runs);
}  // namespace detail

}  // namespace trainbench
