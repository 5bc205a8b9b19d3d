// Each workload's description, one function per family's file (cases/study_info.cpp: convnet, bilstm,
// bert; cases/decoder_info.cpp: gpt, llama; cases/script_spec.cpp: script). cases/workload_info.cpp
// lists them after the CNN zoo.
#pragma once
#include "cases/workload_info.h"

namespace trainbench {

WorkloadInfo convnet_workload_info();
WorkloadInfo bilstm_workload_info();
WorkloadInfo bert_workload_info();
WorkloadInfo gpt_workload_info();
WorkloadInfo llama_workload_info();
WorkloadInfo script_workload_info();

}  // namespace trainbench
