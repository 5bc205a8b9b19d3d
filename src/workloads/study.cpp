#include "workloads/study.h"

#include "workloads/study_models.h"

namespace trainbench {

std::vector<WorkloadInfo> study_workloads() {
  return {convnet_workload_info(), bilstm_workload_info(), bert_workload_info(), gpt_workload_info(),
          llama_workload_info()};
}

}  // namespace trainbench
