// `trainbench devices`: the device catalogue predictions are made for (src/predict/devices.csv), as a
// table or JSON, each row with its public source. Owns its flags.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "core/value_rules.h"
#include "predict/catalogue.h"
#include "results/text_table.h"

namespace trainbench::cli {

namespace {

struct DevicesFlags {
  std::string format = "table";
  std::string catalogue;
};

std::string figure(const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : "-"; }

int cmd_devices(const DevicesFlags& o) {
  if (o.format != "table" && o.format != "json")
    throw InputError("--format: unknown format '" + o.format + "' (table or json)");
  const auto rows = predict::load_catalogue(o.catalogue);
  if (o.format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& d : rows) j.push_back(predict::to_json(d));
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> cells;
  for (const auto& d : rows) {
    cells.push_back({d.id, d.name, d.architecture, std::to_string(d.compute_units), fmt::format("{:g}", d.memory_gb),
                     fmt::format("{:g}", d.memory_gbps), fmt::format("{:g}", d.fp32_tflops), figure(d.tf32_tflops),
                     figure(d.bf16_tflops), figure(d.fp16_tflops), fmt::format("{:g}", d.tdp_w)});
  }
  std::cout << fitted_table({{"id"},
                             {"name"},
                             {"arch"},
                             {"SMs/CUs", 0, true},
                             {"GiB", 0, true},
                             {"GB/s", 0, true},
                             {"fp32", 0, true},
                             {"tf32", 0, true},
                             {"bf16", 0, true},
                             {"fp16", 0, true},
                             {"TDP W", 0, true}},
                            cells);
  std::cout << "Dense peaks in TFLOP/s (tf32, bf16, fp16 on tensor or matrix cores; - where the card has none). "
               "Sources: --format json, or src/predict/devices.csv.\n";
  return kExitOk;
}

}  // namespace

Command add_devices(CLI::App& app) {
  auto o = std::make_shared<DevicesFlags>();
  CLI::App* sub = app.add_subcommand("devices", "The GPUs `predict` knows, with their spec-sheet figures and sources");
  add_format(*sub, o->format, "table or json");
  add_catalogue(*sub, o->catalogue);
  return {sub, [o] { return cmd_devices(*o); }};
}

}  // namespace trainbench::cli
