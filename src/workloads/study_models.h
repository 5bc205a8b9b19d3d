// The study's non-CNN workloads, one file each (convnet.cpp, bilstm.cpp, bert.cpp); study.cpp lists
// them. Their training step is detail::LossWorkload (workloads/training.h).
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "workloads/registry.h"
#include "workloads/training.h"
#include "workloads/workload.h"

namespace trainbench {

WorkloadInfo convnet_workload_info();
WorkloadInfo bilstm_workload_info();
WorkloadInfo bert_workload_info();
WorkloadInfo gpt_workload_info();    // not the study's: decoder language models of today (gpt.cpp,
WorkloadInfo llama_workload_info();  // llama.cpp)

}  // namespace trainbench
