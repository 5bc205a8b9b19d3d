// The study's non-CNN workloads: parameter and FLOP counts against hand-derived formulas, BERT-Base's
// pinned counts, a few training steps with a falling loss, bf16 on CPU, and parameter checks.
#include <gtest/gtest.h>

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cpu_bf16.h"
#include "models/bert.h"
#include "models/bilstm.h"
#include "models/layers.h"
#include "workloads/registry.h"
#include "workloads/workload.h"

namespace trainbench {
namespace {

WorkloadOptions options_for(const std::string& model, Params params, int64_t batch) {
  WorkloadOptions o;
  o.model = model;
  o.params = std::move(params);
  o.batch = batch;
  return o;
}

// Runs `steps` training steps and returns every loss.
std::vector<double> train(Workload& w, int steps) {
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    w.step();
    losses.push_back(w.last_loss());
  }
  return losses;
}

void expect_falling(const std::vector<double>& l) {
  ASSERT_GE(l.size(), 4u);
  for (double x : l) ASSERT_TRUE(std::isfinite(x)) << x;
  const double first = (l[0] + l[1]) / 2.0;
  const double last = (l[l.size() - 2] + l.back()) / 2.0;
  EXPECT_LT(last, first) << "first two " << l[0] << ", " << l[1] << "; last two " << l[l.size() - 2] << ", "
                         << l.back();
}

// ---- convnet ---------------------------------------------------------------------------------------

// Every convolution has stride 1, same padding and no bias, so its forward FLOPs are
// 2 * H * W * (its weights) per sample, and the model's are 2 * H * W * (all weights).
TEST(StudyConvNet, ParametersAndFlopsByHand) {
  const int64_t c = 8, depth = 3, image = 10, batch = 2;
  for (int64_t k : {3, 5}) {
    const int64_t stem = 3 * c * k * k;
    const struct {
      const char* variant;
      int64_t block;  // weights of one block
    } cases[] = {
        {"conv", c * c * k * k},           // A: C -> C, k x k
        {"separable", c * k * k + c * c},  // B: depthwise k x k (one filter per channel), then 1 x 1 C -> C
        {"depthwise", c * k * k},          // C: depthwise k x k alone
    };
    for (const auto& cs : cases) {
      SCOPED_TRACE(std::string(cs.variant) + " k=" + std::to_string(k));
      const int64_t weights = stem + depth * cs.block;
      const double forward = 2.0 * image * image * static_cast<double>(weights) * batch;
      auto o = options_for("convnet",
                           {{"variant", cs.variant},
                            {"channels", std::to_string(c)},
                            {"depth", std::to_string(depth)},
                            {"image", std::to_string(image)},
                            {"kernel", std::to_string(k)}},
                           batch);
      o.forward_only = true;
      auto w = make_workload(o);
      EXPECT_EQ(w->parameters(), weights);
      EXPECT_DOUBLE_EQ(w->flops_per_step(), forward);
      EXPECT_EQ(w->samples_per_step(), batch);
      EXPECT_EQ(w->unit(), "images/s");
      w->step();
      EXPECT_EQ(w->last_loss(), 0.0) << "forward-only has no loss";

      // Training, per layer: every conv has forward + backward-weights; the blocks also backward-data,
      // the stem none (its input is the image, which needs no gradient).
      o.forward_only = false;
      auto t = make_workload(o);
      const double stem_forward = 2.0 * image * image * static_cast<double>(stem) * batch;
      EXPECT_DOUBLE_EQ(t->flops_per_step(), 3.0 * forward - stem_forward);
      EXPECT_DOUBLE_EQ(t->step_flops().backward_data, forward - stem_forward);
      EXPECT_DOUBLE_EQ(t->step_flops().backward_weights, forward);
    }
  }
}

TEST(StudyConvNet, TrainsChannelsLast) {
  torch::manual_seed(0);
  auto o = options_for("convnet", {{"channels", "4"}, {"depth", "2"}, {"image", "8"}}, 2);
  o.layout = Layout::nhwc;
  auto w = make_workload(o);
  const auto l = train(*w, 3);
  for (double x : l) EXPECT_TRUE(std::isfinite(x));
  EXPECT_NE(l[0], l[2]) << "the weights moved";
}

// ---- bilstm ----------------------------------------------------------------------------------------

TEST(StudyBiLSTM, ParameterCountAndFlopsByFormula) {
  const int64_t vocab = 50, embed = 12, hidden = 10, layers = 3, classes = 4, seq = 7, batch = 3;
  // LibTorch's LSTM, per layer and direction: W_ih 4h x input, W_hh 4h x h, b_ih and b_hh 4h each;
  // input = embed for layer 0, 2h (both directions) above it.
  int64_t lstm = 0;
  double gate_flops = 0.0;  // per time step of one sequence
  for (int64_t l = 0; l < layers; ++l) {
    const int64_t input = l == 0 ? embed : 2 * hidden;
    lstm += 2 * (4 * hidden * (input + hidden) + 8 * hidden);
    gate_flops += 2 * (2.0 * 4 * hidden * (input + hidden));
  }
  const int64_t expected = vocab * embed + lstm + (2 * hidden * classes + classes);
  const double forward = batch * (seq * gate_flops + 2.0 * 2 * hidden * classes);

  auto w = make_workload(options_for("bilstm",
                                     {{"vocab", std::to_string(vocab)},
                                      {"embed", std::to_string(embed)},
                                      {"hidden", std::to_string(hidden)},
                                      {"layers", std::to_string(layers)},
                                      {"classes", std::to_string(classes)},
                                      {"seq", std::to_string(seq)}},
                                     batch));
  EXPECT_EQ(w->parameters(), expected);
  EXPECT_DOUBLE_EQ(w->flops_per_step(), 3.0 * forward);
  EXPECT_EQ(w->unit(), "sequences/s");
  EXPECT_EQ(w->samples_per_step(), batch);

  models::BiLSTM m(models::BiLSTMOptions().vocab(vocab).embed(embed).hidden(hidden).layers(layers).classes(classes));
  EXPECT_EQ(m->forward(torch::randint(0, vocab, {batch, seq})).sizes(), (std::vector<int64_t>{batch, classes}));
}

TEST(StudyBiLSTM, TinyTrainsWithFallingLoss) {
  torch::manual_seed(0);
  auto o = options_for("bilstm", {{"vocab", "100"}, {"embed", "16"}, {"hidden", "16"}, {"seq", "12"}}, 8);
  o.optimizer = "adam";
  auto w = make_workload(o);
  expect_falling(train(*w, 10));
}

// ---- bert ------------------------------------------------------------------------------------------

// BERT's parameter count from its shapes (Hugging Face's modeling_bert.py), for vocab V, positions P,
// 2 segment types, width H, feed-forward F = 4H, L layers:
//   embeddings  (V + P + 2) H + LayerNorm 2H
//   per layer   Q, K, V, attention output 4 (H^2 + H) + LayerNorm 2H + (HF + F) + (FH + H) + LayerNorm 2H
//   pooler      H^2 + H (BertModel with add_pooling_layer; BertForMaskedLM has none)
//   MLM head    transform H^2 + H, LayerNorm 2H, decoder bias V (decoder weight tied to the embedding)
//   NSP head    2H + 2 (BertForPreTraining only)
struct BertShape {
  int64_t vocab, max_pos, h, layers;
  int64_t embeddings() const { return (vocab + max_pos + 2) * h + 2 * h; }
  int64_t layer() const {
    const int64_t f = 4 * h;
    return 4 * (h * h + h) + 2 * h + (h * f + f) + (f * h + h) + 2 * h;
  }
  int64_t pooler() const { return h * h + h; }
  int64_t mlm_head() const { return (h * h + h) + 2 * h + vocab; }
  int64_t nsp_head() const { return 2 * h + 2; }
  int64_t pretraining() const { return embeddings() + layers * layer() + pooler() + mlm_head() + nsp_head(); }
  int64_t masked_lm() const { return embeddings() + layers * layer() + mlm_head(); }
};

// bert-base-uncased (V 30522, P 512, H 768, L 12): Hugging Face's published counts are BertModel
// 109,482,240, BertForPreTraining 110,106,428 and BertForMaskedLM 109,514,298 (REFERENCES.md); the
// formula above gives the same.
TEST(StudyBert, DefaultParameterCountsAreBertBase) {
  const BertShape base{30522, 512, 768, 12};
  EXPECT_EQ(base.embeddings() + 12 * base.layer() + base.pooler(), 109'482'240);
  EXPECT_EQ(base.pretraining(), 110'106'428);
  EXPECT_EQ(base.masked_lm(), 109'514'298);

  models::BertForPreTraining pretraining;
  EXPECT_EQ(pretraining->encoder_parameter_count(), 109'482'240);
  EXPECT_EQ(pretraining->parameter_count(), 110'106'428);
  models::BertMaskedLM masked_lm;
  EXPECT_EQ(masked_lm->parameter_count(), 109'514'298);
  EXPECT_FALSE(masked_lm->bert->pooler) << "BertForMaskedLM builds BertModel without a pooler";
  // BertForQuestionAnswering: BertModel without its pooler (109,482,240 - 768^2 - 768) and Linear(768, 2):
  // 108,891,648 + 1,538 = 108,893,186, Hugging Face's count for bert-base-uncased's SQuAD model.
  models::BertForQuestionAnswering qa;
  EXPECT_EQ(qa->parameter_count(), base.embeddings() + 12 * base.layer() + 768 * 2 + 2);
  EXPECT_EQ(qa->parameter_count(), 108'893'186);
  EXPECT_FALSE(qa->bert->pooler);
}

// Forward FLOPs per sequence (T tokens, width H, F = 4H, vocab V, L layers), 2 per multiply-add:
// per layer Q, K, V, output 4 * 2TH^2, scores q k^T and probs v 2 * 2T^2H, feed-forward 2 * 2THF;
// MLM transform 2TH^2 and decoder 2THV at every position; pretraining adds the pooler 2H^2 and the
// next-sentence head 2 * 2H on the first token. Training: every product has both backward parts (the
// first linear reads the trainable embeddings, attention's products two activations): 3x forward.
TEST(StudyBert, TinyFlopsAndParametersByFormula) {
  const int64_t layers = 2, h = 64, heads = 2, vocab = 100, t = 16, batch = 2, f = 4 * h, max_pos = 32;
  const double per_layer = 4 * 2.0 * t * h * h + 2 * 2.0 * t * t * h + 2 * 2.0 * t * h * f;
  const double mlm_forward = batch * (layers * per_layer + 2.0 * t * h * h + 2.0 * t * h * vocab);
  const double pretraining_forward = mlm_forward + batch * (2.0 * h * h + 2.0 * h * 2);
  // qa: the encoder and a start/end logit (2TH x 2) at every position; no MLM head.
  const double qa_forward = batch * (layers * per_layer + 2.0 * t * h * 2);
  const BertShape shape{vocab, max_pos, h, layers};

  for (const char* head : {"pretraining", "mlm", "qa"}) {
    SCOPED_TRACE(head);
    const bool pretraining = std::string(head) == "pretraining", qa = std::string(head) == "qa";
    auto o = options_for("bert",
                         {{"layers", std::to_string(layers)},
                          {"hidden", std::to_string(h)},
                          {"heads", std::to_string(heads)},
                          {"vocab", std::to_string(vocab)},
                          {"seq", std::to_string(t)},
                          {"max_pos", std::to_string(max_pos)},
                          {"head", head}},
                         batch);
    auto w = make_workload(o);
    EXPECT_EQ(w->parameters(), pretraining ? shape.pretraining()
                               : qa        ? shape.embeddings() + layers * shape.layer() + 2 * h + 2
                                           : shape.masked_lm());
    const double forward = pretraining ? pretraining_forward : qa ? qa_forward : mlm_forward;
    EXPECT_DOUBLE_EQ(w->step_flops().forward, forward);
    EXPECT_DOUBLE_EQ(w->flops_per_step(), 3.0 * forward);
    EXPECT_EQ(w->unit(), "sequences/s");
    w->step();
    EXPECT_TRUE(std::isfinite(w->last_loss()));
  }

  const auto options = models::BertOptions().layers(layers).hidden(h).heads(heads).vocab(vocab).max_pos(max_pos);
  models::BertForPreTraining m(options);
  EXPECT_EQ(m->encoder_parameter_count(), shape.embeddings() + layers * shape.layer() + shape.pooler());
  const auto ids = torch::randint(0, vocab, {batch, t});
  const auto [mlm, nsp] = m->forward(ids, torch::zeros_like(ids));
  EXPECT_EQ(mlm.sizes(), (std::vector<int64_t>{batch, t, vocab}));
  EXPECT_EQ(nsp.sizes(), (std::vector<int64_t>{batch, 2}));
}

thread_local std::map<std::string, int>* t_op_counts = nullptr;

// Every operator `fn` dispatches on this thread, by name (nested calls included).
std::map<std::string, int> dispatched_ops(const std::function<void()>& fn) {
  std::map<std::string, int> counts;
  t_op_counts = &counts;
  const auto handle = at::addThreadLocalCallback(at::RecordFunctionCallback(
      [](const at::RecordFunction& f) -> std::unique_ptr<at::ObserverContext> {
        if (t_op_counts != nullptr) ++(*t_op_counts)[f.name()];
        return nullptr;
      },
      nullptr));
  fn();
  at::removeCallback(handle);
  t_op_counts = nullptr;
  return counts;
}

TEST(StudyBert, EveryLinearLayerIsOneFusedProductAsInPython) {
  // Python's nn.Linear calls at::linear, which runs a contiguous [N, T, in] input as one addmm with
  // the bias fused in. BertForPreTraining has 6 linear layers per encoder layer (query, key, value,
  // attention output, intermediate, output) plus the pooler, the MLM transform, the tied decoder and
  // the next-sentence classifier: 6 L + 4 addmm calls, and no matmul but attention's two per layer.
  const int64_t layers = 2, h = 32, vocab = 50, t = 8, batch = 2;
  models::BertForPreTraining m(models::BertOptions().layers(layers).hidden(h).heads(2).vocab(vocab).max_pos(16));
  const auto ids = torch::randint(0, vocab, {batch, t});
  const auto ops = dispatched_ops([&] { (void)m->forward(ids, torch::zeros_like(ids)); });
  EXPECT_EQ(ops.count("aten::addmm") ? ops.at("aten::addmm") : 0, 6 * layers + 4);
  EXPECT_EQ(ops.count("aten::matmul") ? ops.at("aten::matmul") : 0, 2 * layers);

  // The fused product gives the frontend's matmul + bias result.
  torch::nn::Linear dense(h, 3 * h);
  const auto x = torch::randn({batch, t, h});
  EXPECT_TRUE(torch::allclose(models::linear(dense, x), dense->forward(x), 1e-5, 1e-6));
}

TEST(StudyBert, TinyTrainsWithFallingLoss) {
  for (const char* head : {"pretraining", "mlm", "qa"}) {
    SCOPED_TRACE(head);
    torch::manual_seed(0);
    auto o = options_for(
        "bert", {{"layers", "2"}, {"hidden", "64"}, {"heads", "2"}, {"vocab", "100"}, {"seq", "16"}, {"head", head}},
        4);
    o.optimizer = "adamw";
    auto w = make_workload(o);
    expect_falling(train(*w, 10));
  }
}

// ---- every study workload ----------------------------------------------------------------------------

const std::vector<std::pair<std::string, Params>> kTiny = {
    {"convnet", {{"channels", "4"}, {"depth", "2"}, {"image", "8"}}},
    {"bilstm", {{"vocab", "50"}, {"embed", "8"}, {"hidden", "8"}, {"seq", "6"}}},
    {"bert", {{"layers", "1"}, {"hidden", "32"}, {"heads", "2"}, {"vocab", "50"}, {"seq", "8"}}},
};

// On every CPU: bf16 autocast gives a finite loss, except an LSTM where LibTorch and the CPU report that
// oneDNN cannot run it (core/cpu_bf16.h; tests/core/test_cpu_bf16.cpp checks that report against the CPU's
// flags). There the workload is refused with that one line before anything is built, and bf16-pure
// trains the same model. Each machine asserts one branch; test_cpu_bf16.cpp's run under
// ONEDNN_MAX_CPU_ISA=AVX2 asserts the refusing one on any x86 machine.
TEST(StudyWorkloads, Bf16OnCpuGivesAFiniteLossOrSaysWhyNot) {
  const std::string lstm_problem = cpu_bf16_lstm_problem();
  for (const auto& [model, params] : kTiny) {
    SCOPED_TRACE(model);
    auto o = options_for(model, params, 2);
    o.precision = parse_precision("bf16");
    if (model == "bilstm" && !lstm_problem.empty()) {
      try {
        make_workload(o);
        ADD_FAILURE() << "a bf16 autocast LSTM was built where oneDNN cannot run it";
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(e.what(), lstm_problem);
        EXPECT_NE(lstm_problem.find("bf16-pure"), std::string::npos) << lstm_problem;
        EXPECT_EQ(lstm_problem.find('\n'), std::string::npos) << "one line";
      }
      o.precision = parse_precision("bf16-pure");
    }
    auto w = make_workload(o);
    w->step();
    EXPECT_TRUE(std::isfinite(w->last_loss()));
    o.forward_only = true;
    make_workload(o)->step();
  }
}

TEST(StudyWorkloads, Fp16NeedsAGpu) {
  for (const auto& [model, params] : kTiny) {
    auto o = options_for(model, params, 2);
    o.precision = parse_precision("fp16");
    EXPECT_THROW(make_workload(o), std::invalid_argument) << model;
  }
}

TEST(StudyWorkloads, RegisteredWithFamilies) {
  const struct {
    const char* name;
    const char* family;
    const char* unit;
  } expected[] = {
      {"convnet", "ablation", "images/s"}, {"bilstm", "lstm", "sequences/s"}, {"bert", "transformer", "sequences/s"}};
  for (const auto& e : expected) {
    const WorkloadInfo* w = find_workload(e.name);
    ASSERT_NE(w, nullptr) << e.name;
    EXPECT_EQ(w->family, e.family);
    EXPECT_EQ(w->unit, e.unit);
    EXPECT_TRUE(canonical_params(*w, effective_params(*w, {})).empty()) << "defaults pass their own checks";
  }
}

TEST(StudyWorkloads, RejectsUnknownParametersAndBadValues) {
  const std::vector<std::pair<std::string, Params>> bad = {
      {"convnet", {{"variant", "bogus"}}},
      {"convnet", {{"kernel", "4"}}},
      {"convnet", {{"channels", "0"}}},
      {"convnet", {{"width", "8"}}},
      {"bilstm", {{"hidden", "x"}}},
      {"bert", {{"seq", "600"}}},  // > max_pos 512
      {"bert", {{"seq", "40"}, {"max_pos", "32"}}},
      {"bert", {{"hidden", "100"}, {"heads", "12"}}},  // heads must divide hidden
      {"bert", {{"head", "nsp"}}},
  };
  for (const auto& [model, params] : bad) {
    std::string text;
    for (const auto& [k, v] : params) text += k + "=" + v + " ";
    EXPECT_THROW(make_workload(options_for(model, params, 2)), std::invalid_argument) << model << " " << text;
  }
}

}  // namespace
}  // namespace trainbench
