// Building a workload: what builds each description of cases/workload_info.h, and the checks of a
// case's parameters that need LibTorch.
#pragma once
#include <memory>

#include "cases/workload_info.h"
#include "workloads/workload.h"

namespace trainbench {

namespace models {
struct ModelInfo;
}

// What builds each workload (workloads/<name>.cpp); options.params holds every parameter, the defaults
// filled in.
std::unique_ptr<Workload> make_cnn_workload(const models::ModelInfo& info, const WorkloadOptions& options);
std::unique_ptr<Workload> make_convnet_workload(const WorkloadOptions& options);
std::unique_ptr<Workload> make_bilstm_workload(const WorkloadOptions& options);
std::unique_ptr<Workload> make_bert_workload(const WorkloadOptions& options);
std::unique_ptr<Workload> make_gpt_workload(const WorkloadOptions& options);
std::unique_ptr<Workload> make_llama_workload(const WorkloadOptions& options);
std::unique_ptr<Workload> make_script_workload(const WorkloadOptions& options);
// The script workload's check with LibTorch: the file loaded and a forward of two samples fitted to
// the target (workloads/script.h says where it runs).
void check_script_model(const Params& all);

// canonical_params, then what only LibTorch can check (a TorchScript file). Throws
// std::invalid_argument (one line).
Params check_params(const WorkloadInfo& w, const Params& given);

// Builds the workload for `options` on its device. Throws std::invalid_argument for an unknown model
// or a setting the workload cannot run (the runner turns that into the case's error).
std::unique_ptr<Workload> make_workload(const WorkloadOptions& options);

}  // namespace trainbench
