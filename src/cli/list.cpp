// `trainbench list`: the models and suites, with input shape, default batch and parameter count.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "models/registry.h"
#include "runner/suite.h"

namespace trainbench::cli {
namespace {

std::string grouped(int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

}  // namespace

int cmd_list() {
  torch::NoGradGuard no_grad;
  std::cout << fmt::format("{:<14} {:<7} {:<13} {:>7} {:>13}  {}\n", "model", "family", "input", "batch",
                           "parameters", "description");
  for (const auto& m : models::all_models()) {
    auto module = m.make();  // counted from the real model, not a table
    std::string shape;
    for (int64_t d : m.input_shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    std::cout << fmt::format("{:<14} {:<7} {:<13} {:>7} {:>13}  {}\n", m.name, m.family, shape, m.default_batch,
                             grouped(models::parameter_count(*module.ptr())), m.description);
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
