// The seed study's workloads beyond the CNN zoo, described: the fully-convolutional ablation (convnet),
// the biLSTM classifier (bilstm) and the BERT-Base-shaped Transformer (bert). workloads/convnet.cpp,
// bilstm.cpp and bert.cpp build them.
#include <stdexcept>
#include <string>
#include <vector>

#include "cases/attention_kernel.h"
#include "cases/descriptions.h"

namespace trainbench {
namespace {

std::function<void(const std::string&)> odd_in_range(int64_t lo, int64_t hi) {
  auto in_range = int_in_range(lo, hi);
  return [in_range](const std::string& v) {
    in_range(v);
    if (std::stoll(v) % 2 == 0) throw std::invalid_argument("expected an odd kernel size ('same' padding k/2)");
  };
}

}  // namespace

WorkloadInfo convnet_workload_info() {
  WorkloadInfo w;
  w.name = "convnet";
  w.family = "ablation";
  w.unit = "images/s";
  w.input = "3x56x56";
  w.default_batch = 32;
  w.description = "Ablation: stem conv + `depth` conv / separable / depthwise blocks, nothing else; loss = mean square";
  const std::vector<std::string> variants = {"conv", "separable", "depthwise"};
  w.params = {
      {"variant", "conv", "block: conv (k x k), separable (depthwise k x k + pointwise 1 x 1), depthwise (k x k)",
       one_of(variants)},
      {"channels", "64", "channels of every block, 1 to 4096", int_in_range(1, 4096)},
      {"depth", "8", "blocks after the stem, 1 to 1000", int_in_range(1, 1000)},
      {"image", "56", "image height and width, 1 to 4096", int_in_range(1, 4096)},
      {"kernel", "3", "kernel size, odd, 1 to 31", odd_in_range(1, 31)},
  };
  // The HTML report draws the variants side by side, in this order.
  w.ablation = AblationInfo{"variant", variants, "Ablation: convolution, separable, depthwise"};
  return w;
}

WorkloadInfo bilstm_workload_info() {
  WorkloadInfo w;
  w.name = "bilstm";
  w.family = "lstm";
  w.unit = "sequences/s";
  w.input = "seq 100";
  w.default_batch = 64;
  w.description = "Sequence classifier: embedding, bidirectional LSTM (batch-first), mean over time, linear";
  w.data_kind = data::DataKind::tokens;
  w.params = {
      {"vocab", "20000", "vocabulary size, 2 to 10000000", int_in_range(2, 10'000'000)},
      {"embed", "256", "embedding width, 1 to 65536", int_in_range(1, 65536)},
      {"hidden", "256", "LSTM hidden size per direction, 1 to 65536", int_in_range(1, 65536)},
      {"layers", "2", "stacked bidirectional LSTM layers, 1 to 64", int_in_range(1, 64)},
      {"seq", "100", "tokens per sequence, 1 to 100000", int_in_range(1, 100'000)},
      {"classes", "2", "output classes, 2 to 100000", int_in_range(2, 100'000)},
  };
  w.depth = [](const Params& p) { return param_int(p, "layers"); };  // the first layer reads the embedding
  return w;
}

WorkloadInfo bert_workload_info() {
  WorkloadInfo w;
  w.name = "bert";
  w.family = "transformer";
  w.unit = "sequences/s";
  w.input = "seq 200";
  w.default_batch = 32;
  w.description =
      "BERT-Base pre-training from scratch, Hugging Face's BertForPreTraining (110.1M params): masked-LM loss on "
      "15% of positions + next-sentence loss";
  w.data_kind = data::DataKind::tokens;
  w.params = {
      {"layers", "12", "encoder layers, 1 to 256", int_in_range(1, 256)},
      {"hidden", "768", "hidden width, 1 to 65536 (a multiple of heads); feed-forward is 4x", int_in_range(1, 65536)},
      {"heads", "12", "attention heads, 1 to 1024 (must divide hidden)", int_in_range(1, 1024)},
      {"vocab", "30522", "vocabulary size, 2 to 10000000", int_in_range(2, 10'000'000)},
      {"max_pos", "512", "position-embedding length, 1 to 100000 (at least seq)", int_in_range(1, 100'000)},
      {"seq", "200", "tokens per sequence, 1 to 100000 (at most max_pos)", int_in_range(1, 100'000)},
      {"head", "pretraining",
       "pretraining (BertForPreTraining: MLM + next-sentence, pooler), mlm (BertForMaskedLM: MLM only, no pooler) or "
       "qa (BertForQuestionAnswering: SQuAD fine-tuning's start/end span loss, no pooler)",
       one_of({"pretraining", "mlm", "qa"})},
      {"attention", models::default_attention_kernel(), models::attention_param_help(),
       [](const std::string& v) { (void)models::attention_kernel_from(v); }, /*kernel_choice=*/true},
  };
  w.check_together = [](const Params& p) {
    const int64_t seq = param_int(p, "seq"), max_pos = param_int(p, "max_pos");
    if (seq > max_pos) {
      throw std::invalid_argument("bert: seq " + std::to_string(seq) + " exceeds max_pos " + std::to_string(max_pos));
    }
    const int64_t hidden = param_int(p, "hidden"), heads = param_int(p, "heads");
    if (hidden % heads != 0) {
      throw std::invalid_argument("bert: heads " + std::to_string(heads) + " does not divide hidden " +
                                  std::to_string(hidden));
    }
  };
  w.depth = [](const Params& p) { return param_int(p, "layers"); };
  return w;
}

}  // namespace trainbench
