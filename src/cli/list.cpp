// `trainbench list`: every workload (the CNN zoo and the study's others) with input, default batch,
// parameter count and forward FLOPs, counted from the real model; then the built-in suites.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "core/flops.h"
#include "runner/suite.h"
#include "workloads/registry.h"

namespace trainbench::cli {
namespace {

std::string grouped(int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

}  // namespace

int cmd_list() {
  configure_threads(0);
  std::cout << fmt::format("{:<14} {:<11} {:<11} {:>6} {:>13} {:>9}  {}\n", "model", "family", "input", "batch",
                           "parameters", "fwd GFLOP", "description");
  for (const auto& w : all_workloads()) {
    WorkloadOptions o;
    o.model = w.name;
    o.batch = 1;
    o.forward_only = true;  // no optimizer state needed to count
    std::string params = "?", gflops = "?";
    try {
      const auto built = make_workload(o);
      params = grouped(built->parameters());
      gflops = fmt::format("{:.3g}", built->flops_per_step() / 1e9);
    } catch (const std::exception& e) {
      params = "error";
    }
    std::cout << fmt::format("{:<14} {:<11} {:<11} {:>6} {:>13} {:>9}  {}\n", w.name, w.family, w.input,
                             w.default_batch, params, gflops, w.description);
    for (const auto& p : w.params) {
      std::cout << fmt::format("{:<14}   --set {}={}  {}\n", "", p.key, p.default_value, p.help);
    }
  }
  std::cout << "\n" << fmt::format("{:<14} {}\n", "suite", "description");
  for (const auto& name : builtin_suites()) {
    std::string description;
    try {
      description = load_suite(name).description;
    } catch (const std::exception& e) {
      description = std::string("(malformed: ") + e.what() + ")";
    }
    std::cout << fmt::format("{:<14} {}\n", name, description);
  }
  return kExitOk;
}

}  // namespace trainbench::cli
