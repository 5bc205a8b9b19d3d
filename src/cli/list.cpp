// `trainbench list`: every workload (the CNN zoo and the study's others) with input, default batch,
// parameter count and FLOPs per sample (forward, and a training step by the per-layer rule of
// core/flops.h), counted from the real model at batch 1 and kept in a cache (workloads/model_counts.h)
// so that a second listing answers at once; then the built-in suites.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/options.h"
#include "results/text_table.h"
#include "runner/suite.h"
#include "workloads/model_counts.h"
#include "workloads/registry.h"
#include "workloads/script.h"

namespace trainbench::cli {
namespace {

std::string grouped(int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

// Printed a row at a time (a model not yet in the cache takes a while to count), so the widths are fixed.
TextTable model_table() {
  return TextTable({{"model", 14},
                    {"family", 11, false, 1},
                    {"input", 11, false, 1},
                    {"batch", 6, true, 1},
                    {"parameters", 13, true, 1},
                    {"fwd GFLOP", 9, true, 1},
                    {"train GFLOP", 11, true, 1},
                    {"description", 0, false, 2}});
}

TextTable suite_table() { return TextTable({{"suite", 14}, {"description", 0, false, 1}}); }

}  // namespace

int cmd_list(const std::vector<std::string>& models) {
  std::vector<const WorkloadInfo*> chosen;
  for (const auto& name : models) {
    const WorkloadInfo* w = find_workload(name);
    if (w == nullptr) return bad_input("unknown model '" + name + "' (see `trainbench list`)");
    chosen.push_back(w);
  }
  if (models.empty()) {
    for (const auto& w : all_workloads()) chosen.push_back(&w);
  }
  configure_threads(0);  // for the models the cache does not hold yet
  CountsCache cache(counts_cache_dir());
  const TextTable table = model_table();
  std::cout << table.header();
  for (const WorkloadInfo* w : chosen) {
    std::string params = "?", forward = "?", training = "?";
    if (w->name == kScriptModel) {
      params = forward = training = "-";  // the file's own: `run --model FILE.pt` records them
    } else
      try {
        const ModelCounts c = cache.get(*w, effective_params(*w, {}));
        params = grouped(c.parameters);
        forward = fmt::format("{:.3g}", c.forward_flops / 1e9);
        training = fmt::format("{:.3g}", c.training_flops / 1e9);
      } catch (const std::exception&) {
        params = "error";
      }
    std::cout << table.line(
        {w->name, w->family, w->input, std::to_string(w->default_batch), params, forward, training, w->description});
    for (const auto& p : w->params) {
      std::cout << fmt::format("{:<14}   --set {}={}  {}\n", "", p.key, p.default_value, p.help);
    }
    std::cout.flush();
  }
  cache.save();
  if (!models.empty()) return kExitOk;
  const TextTable suites = suite_table();
  std::cout << "\n" << suites.header();
  for (const auto& name : builtin_suites()) {
    std::string description;
    try {
      description = load_suite(name).description;
    } catch (const std::exception& e) {
      description = std::string("(malformed: ") + e.what() + ")";
    }
    std::cout << suites.line({name, description});
  }
  return kExitOk;
}

Command add_list(CLI::App& app) {
  auto models = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand(
      "list", "Models and suites with input shape, default batch, parameter count and FLOPs per sample");
  sub->add_option("models", *models, "Only these models (default: every model, then the suites)");
  return {sub, [models] { return cmd_list(*models); }};
}

}  // namespace trainbench::cli
