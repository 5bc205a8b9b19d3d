// `trainbench report RESULTS.json [MORE.json ...] -o report.html`: reads results files (or stored runs,
// store:QUERY) only.
#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/store_flags.h"
#include "report/html_report.h"
#include "results/results_file.h"

namespace trainbench::cli {
namespace {

struct ReportOptions {
  std::vector<std::string> files;  // results files, or store:QUERY
  StoreFlags store;
  std::string output;
};

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

}  // namespace

Command add_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand("report", "Write a self-contained HTML report (charts, tables) of results files");
  sub->add_option("files", o->files, "RESULTS.json [MORE.json ...]; the first is BASE; store:QUERY gives stored runs")
      ->required();
  o->store.add_to(*sub, false);
  add_output(*sub, o->output, "The HTML file to write")->required();
  return {sub, [o] { return cmd_report(*o); }};
}

void report_after_run(const std::string& results_path, const std::string& report_path) {
  write_html_report({results_path}, report_path);
  std::cerr << "report: " << report_path << "\n";
}

}  // namespace trainbench::cli
