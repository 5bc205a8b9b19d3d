// A plan: the cartesian product of list-valued settings, validated before anything runs.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/value_rules.h"  // InputError and the list, number and size parsers
#include "cases/case.h"

namespace trainbench {

// Settings that replace a sweep's own on one kind of device (a suite's [group.cpu] table): CPUs are
// slow, so suites give them smaller batches or fewer models.
struct SweepOverride {
  std::optional<std::vector<std::string>> models;
  std::optional<std::vector<std::map<std::string, std::string>>> params;
  std::optional<std::vector<int64_t>> batches;
  std::optional<bool> search_batch;  // set with batches: `batch = "auto"` (or not) on that device
  std::optional<std::vector<std::string>> precisions, layouts, optimizers;
  std::optional<std::vector<int>> threads;
};

// Each setting is a list; the plan is their product. Empty lists take the default.
struct Sweep {
  std::vector<std::string> models;
  std::vector<std::map<std::string, std::string>> params;  // one entry per parameter combination
  std::vector<int64_t> batches;
  // A suite's `batch = "auto"`: the largest batch that fits is searched (as `run --batch auto`); batches
  // then holds {1}, the search's start.
  bool search_batch = false;
  std::vector<std::string> precisions = {"fp32"};
  std::vector<std::string> layouts = {"nchw"};
  std::vector<std::string> optimizers = {"sgd"};
  std::vector<std::string> devices;  // empty: the best device present
  std::vector<int> threads = {0};
  bool forward_only = false;
  std::string data = "synthetic";                   // --data: one source for the whole sweep
  std::string data_dtype = "uint16";                // token files
  std::string data_transfer = "float";              // images: float | uint8 (normalized on the device)
  std::vector<int> loader_threads = {0};            // 0: the default (data/loader.h); only with real data
  std::map<std::string, SweepOverride> per_device;  // by device type: "cpu", "cuda"
};

// Throws InputError for an unknown model, batch <= 0, unknown precision/layout/optimizer/device.
std::vector<Case> make_plan(const Sweep& sweep);
// Whether the sweep's cases on a device of this type ("cpu", "cuda") search their batch: the device's
// override decides when it gives a batch, else the sweep.
bool searches_batch(const Sweep& sweep, const std::string& device_type);

// Checks one case as make_plan checks a sweep (for `run --case` and `--resume`), and puts its
// parameters in canonical form (values equal to the default dropped).
void validate_case(Case& c);

// The cartesian product of parameter value lists: {a: [1, 2], b: [x]} -> [{a:1,b:x}, {a:2,b:x}].
std::vector<std::map<std::string, std::string>> params_product(
    const std::map<std::string, std::vector<std::string>>& values);

// Parses `--set key=v1,v2` arguments into value lists. Throws InputError.
std::map<std::string, std::vector<std::string>> parse_sets(const std::vector<std::string>& sets);

}  // namespace trainbench
