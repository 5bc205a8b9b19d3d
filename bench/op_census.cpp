// What one training step of a trainbench workload dispatches: every ATen operator it calls, counted,
// after two untimed steps (so lazy initialisation is not counted). bench/op_census.py compares it with
// the PyTorch eager step of bench/pytorch_loop.py. Not part of trainbench itself: built on request
// (`cmake --build build --target trainbench_op_census`).
//
// Usage: trainbench_op_census MODEL BATCH OPTIMIZER [key=value ...]   (prints one JSON object)
#include <ATen/record_function.h>
#include <torch/torch.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "workloads/registry.h"

namespace {

std::map<std::string, int64_t>* g_counts = nullptr;

int census(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: trainbench_op_census MODEL BATCH OPTIMIZER [key=value ...]\n";
    return 2;
  }
  torch::set_num_threads(1);  // the operator sequence does not depend on threads; one keeps it quick
  trainbench::WorkloadOptions o;
  o.model = argv[1];
  o.batch = std::stoll(argv[2]);
  o.optimizer = argv[3];
  const trainbench::WorkloadInfo* info = trainbench::find_workload(o.model);
  if (info == nullptr) throw std::invalid_argument("unknown model '" + o.model + "'");
  trainbench::Params given;
  for (int i = 4; i < argc; ++i) {
    const std::string kv = argv[i];
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("expected key=value, got '" + kv + "'");
    given[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  o.params = trainbench::effective_params(*info, trainbench::canonical_params(*info, given));
  torch::manual_seed(0);
  auto w = info->make(o);
  w->step();
  w->step();

  std::map<std::string, int64_t> counts;
  g_counts = &counts;
  // Global, so operators the autograd engine runs on another thread would be counted too.
  const auto handle = at::addGlobalCallback(at::RecordFunctionCallback(
      [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
        if (g_counts != nullptr && fn.scope() == at::RecordScope::FUNCTION) ++(*g_counts)[fn.name()];
        return nullptr;
      },
      nullptr));
  w->step();
  at::removeCallback(handle);
  g_counts = nullptr;
  std::cout << nlohmann::json(counts).dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return census(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "trainbench_op_census: " << e.what() << "\n";
    return 2;
  }
}
