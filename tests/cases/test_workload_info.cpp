// The workload descriptions (cases/workload_info.h), in the binary that loads no LibTorch: what compare,
// report and the board read of a workload is there without it.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "cases/attention_kernel.h"
#include "cases/script_spec.h"
#include "cases/workload_info.h"

namespace trainbench {
namespace {

// Every description's defaults pass its own rules (a default its check refuses would make the plain
// `--model NAME` case unrunnable), and a case at the defaults has no parameters in its canonical form.
// The TorchScript workload has no file by default: refused in one line that says what to give.
TEST(WorkloadInfo, EveryDescriptionsDefaultsPassItsOwnRules) {
  std::set<std::string> names;
  for (const WorkloadInfo& w : all_workloads()) {
    EXPECT_TRUE(names.insert(w.name).second) << w.name << " described twice";
    EXPECT_FALSE(w.unit.empty()) << w.name;
    EXPECT_GT(w.default_batch, 0) << w.name;
    if (w.name == kScriptModel) {
      try {
        (void)canonical_params(w, {});
        ADD_FAILURE() << "script without a file passed";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("script needs file=, input= and target="), std::string::npos) << e.what();
      }
      continue;
    }
    Params defaults;
    for (const ParamSpec& p : w.params) defaults[p.key] = p.default_value;
    EXPECT_NO_THROW(EXPECT_TRUE(canonical_params(w, defaults).empty()) << w.name) << w.name;
    if (w.depth) EXPECT_GE(w.depth(effective_params(w, {})), 1) << w.name;
  }
  // The study's workloads and the zoo's, each once (tf_cnn_benchmarks' resnet50, the ablation, the biLSTM, BERT).
  for (const char* name : {"resnet50", "inception3", "convnet", "bilstm", "bert", "gpt", "llama", "script"})
    EXPECT_TRUE(is_known_model(name)) << name;
  EXPECT_FALSE(is_known_model("resnet51"));
}

// The attention kernels come from the LibTorch version CMake found (this binary links none): 1.13 has only
// the math kernel and refuses sdpa naming its version; 2.x defaults to sdpa.
TEST(WorkloadInfo, AttentionKernelsFollowTheLibTorchVersion) {
  if (TRAINBENCH_TORCH_MAJOR < 2) {
    EXPECT_STREQ(models::default_attention_kernel(), "math");
    try {
      (void)models::attention_kernel_from("sdpa");
      ADD_FAILURE() << "sdpa accepted on LibTorch 1.x";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("needs LibTorch 2.0 or later; this is 1."), std::string::npos) << e.what();
    }
  } else {
    EXPECT_STREQ(models::default_attention_kernel(), "sdpa");
    EXPECT_EQ(models::attention_kernel_from("flash"), models::AttentionKernel::flash);
  }
  EXPECT_THROW((void)models::attention_kernel_from("fast"), std::invalid_argument);
}

}  // namespace
}  // namespace trainbench
