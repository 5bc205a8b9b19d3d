// `trainbench report RESULTS.json [MORE.json ...] -o report.html`: reads results files (or stored runs,
// store:QUERY) only.
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "report/html_report.h"
#include "results/results_file.h"

namespace trainbench::cli {

int cmd_report(const ReportOptions& o) {
  check_output(o.output, "-o", o.files, store_of_inputs(o.files, o.store));
  std::vector<ReportRun> runs;
  try {
    for (auto& in : read_inputs(o.files, o.store)) runs.push_back({in.label, std::move(in.file)});
  } catch (const ResultsError& e) {
    return bad_input(e.what());  // a bad file is bad input (exit 2), before anything is written
  }
  find_chartjs();  // ReportError when Chart.js is missing: one line, exit 1
  try {
    write_html_report(runs, o.output);
  } catch (const ReportError& e) {
    return bad_input(e.what());  // the output cannot be written
  }
  std::cerr << "report: " << o.output << "\n";
  return kExitOk;
}

void report_after_run(const std::string& results_path, const std::string& report_path) {
  write_html_report({results_path}, report_path);
  std::cerr << "report: " << report_path << "\n";
}

}  // namespace trainbench::cli
