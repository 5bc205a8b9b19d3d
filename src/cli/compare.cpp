// `trainbench compare BASE.json OTHER.json [MORE.json ...]`: reads results files only; runs nothing.
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "report/compare.h"
#include "results/results_file.h"
#include "core/value_rules.h"

namespace trainbench::cli {

int cmd_compare(const CompareOptions& o) {
  if (o.files.size() < 2) return bad_input("compare needs BASE.json and at least one OTHER.json");
  ComparisonPrinter print = nullptr;
  try {
    print = comparison_printer(o.format);
  } catch (const std::invalid_argument& e) {
    return bad_input(e.what());
  }
  if (!o.output.empty()) check_not_an_input(o.output, "-o", o.files);
  std::vector<ResultsFile> files;
  try {
    for (const auto& f : o.files) files.push_back(read_results(f));
  } catch (const ResultsError& e) {
    return bad_input(e.what());
  }

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
    comparisons.push_back(compare_runs(files[0], files[i], o.files[0], o.files[i]));
    if (const std::string hint = disjoint_hint(files[0], files[i]); !hint.empty()) {
      std::cerr << "trainbench: note: " << o.files[0] << " and " << o.files[i] << ": " << hint << "\n";
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
