#include "workloads/registry.h"

#include <map>
#include <stdexcept>

#include "cases/script_spec.h"
#include "models/registry.h"

namespace trainbench {
namespace {

using Maker = std::unique_ptr<Workload> (*)(const WorkloadOptions&);

// What builds each workload beyond the zoo, by its description's name. A description without a maker
// here is a programming error (tests/workloads: every description builds).
const std::map<std::string, Maker>& makers() {
  static const std::map<std::string, Maker> m = {
      {"convnet", make_convnet_workload}, {"bilstm", make_bilstm_workload}, {"bert", make_bert_workload},
      {"gpt", make_gpt_workload},         {"llama", make_llama_workload},   {kScriptModel, make_script_workload},
  };
  return m;
}

}  // namespace

Params check_params(const WorkloadInfo& w, const Params& given) {
  Params canonical = canonical_params(w, given);
  if (w.name == kScriptModel) check_script_model(effective_params(w, given));
  return canonical;
}

std::unique_ptr<Workload> make_workload(const WorkloadOptions& options) {
  const WorkloadInfo* w = find_workload(options.model);
  if (w == nullptr) throw std::invalid_argument("unknown model '" + options.model + "'");
  (void)check_params(*w, options.params);  // throws for an unknown key or bad value
  WorkloadOptions resolved = options;
  resolved.params = effective_params(*w, options.params);
  if (const models::ModelInfo* zoo = models::find_model(options.model)) return make_cnn_workload(*zoo, resolved);
  const auto maker = makers().find(options.model);
  if (maker == makers().end())
    throw std::logic_error("workload '" + options.model + "' has no maker in workloads/registry.cpp");
  return maker->second(resolved);
}

}  // namespace trainbench
