// `trainbench compare BASE.json OTHER.json [MORE.json ...]`: reads results files (or stored runs,
// store:QUERY) only; runs nothing.
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "report/compare.h"
#include "results/results_file.h"
#include "core/value_rules.h"

namespace trainbench::cli {

int cmd_compare(const CompareOptions& o) {
  ComparisonPrinter print = nullptr;
  try {
    print = comparison_printer(o.format);
  } catch (const std::invalid_argument& e) {
    return bad_input(e.what());
  }
  if (!o.output.empty()) check_output(o.output, "-o", o.files, store_of_inputs(o.files, o.store));
  std::vector<ResultsFile> files;
  std::vector<std::string> labels;
  try {
    for (auto& in : read_inputs(o.files, o.store)) {
      labels.push_back(in.label);
      files.push_back(std::move(in.file));
    }
  } catch (const ResultsError& e) {
    return bad_input(e.what());
  }
  if (files.size() < 2) return bad_input("compare needs BASE.json and at least one OTHER.json (or a store: query of two runs)");

  if (!o.ignore.empty()) {
    try {
      for (const auto& field : split_list(o.ignore, "--ignore")) {
        for (auto& f : files) ignore_field(f, field);
      }
    } catch (const std::invalid_argument& e) {
      return bad_input(e.what());
    }
  }

  std::vector<Comparison> comparisons;
  for (size_t i = 1; i < files.size(); ++i) {
    comparisons.push_back(compare_runs(files[0], files[i], labels[0], labels[i]));
    if (const std::string hint = disjoint_hint(files[0], files[i]); !hint.empty()) {
      std::cerr << "trainbench: note: " << labels[0] << " and " << labels[i] << ": " << hint << "\n";
    }
  }
  const std::string text = print(comparisons);
  if (o.output.empty()) {
    std::cout << text << std::flush;
    return kExitOk;
  }
  std::ofstream out(o.output, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) return bad_input("cannot write output '" + o.output + "'");
  return kExitOk;
}

}  // namespace trainbench::cli
