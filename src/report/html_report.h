// The HTML report: one self-contained page (Chart.js inlined, no network) built from results files.
// It holds each run's context, the speed-up chart OTHER/BASE per model, throughput against batch size,
// the convnet ablation (throughput and GFLOP/s) and every case in a sortable table. docs/compare-and-report.md.
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

namespace detail {
// The page with its three holes filled: title, data model (JSON) and the Chart.js source.
std::string fill_report_template(const std::string& title, const std::string& model_json,
                                 const std::string& body_html, const std::string& chartjs);
std::string html_escape(const std::string& s);
// JSON text made safe inside <script>: <, >, & and U+2028/U+2029 written as \uXXXX escapes.
std::string json_script_safe(const std::string& json);
}  // namespace detail

}  // namespace trainbench
