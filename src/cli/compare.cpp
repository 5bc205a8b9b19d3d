// `trainbench compare BASE.json OTHER.json [MORE.json ...]`: reads results files (or stored runs,
// store:QUERY) only; runs nothing.
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/store_flags.h"
#include "report/compare.h"
#include "results/results_file.h"
#include "core/value_rules.h"

namespace trainbench::cli {
namespace {

struct CompareOptions {
  std::vector<std::string> files;  // BASE OTHER [MORE...]: results files, or store:QUERY
  StoreFlags store;                // the store of store: inputs (--store)
  std::string ignore;              // settings left out of the join: layout,precision,optimizer
  std::string format = "table";
  std::string output;  // empty: stdout
};

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

}  // namespace

Command add_compare(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand("compare", "Compare results files: throughput OTHER/BASE per case, noise-aware");
  sub->add_option("files", o->files, "BASE.json OTHER.json [MORE.json ...]; store:QUERY gives stored runs")->required();
  o->store.add_to(*sub, false);
  add_format(*sub, o->format, "table, md, csv, json");
  add_output(*sub, o->output, "Write to this file instead of stdout");
  sub->add_option("--ignore", o->ignore,
                  "Settings that may differ between runs (layout,precision,optimizer), e.g. nchw vs nhwc");
  return {sub, [o] { return cmd_compare(*o); }};
}

}  // namespace trainbench::cli
