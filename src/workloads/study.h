// The seed study's workloads beyond the CNN zoo: the fully-convolutional ablation (convnet), the
// biLSTM classifier (bilstm) and the BERT-Base-shaped Transformer (bert). Each is a WorkloadInfo with
// its parameters; src/workloads/registry.cpp lists them after the CNNs.
#pragma once
#include <vector>

#include "workloads/registry.h"

namespace trainbench {

std::vector<WorkloadInfo> study_workloads();

}  // namespace trainbench
