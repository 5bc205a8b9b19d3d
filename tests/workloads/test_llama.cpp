// The llama workload: each named size's parameter count derived from its shapes and equal to the
// published model's, each named size equal to its Hugging Face config.json read by the config reader,
// logits against an independent float64 forward (tests/fixtures/llama_reference.json: RoPE with Llama 3.1
// scaling, grouped- and multi-query attention, tied and untied heads, Qwen 2's biases), the FLOP count and
// the MFU formula on a tiny model, causal attention, checkpointing, precisions, and every kind of bad
// config.json refused with one line naming the field. Every model built here is tiny.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_util.h"
#include "core/precision.h"
#include "models/attention.h"
#include "models/llama.h"
#include "cases/llama_config.h"
#include "workloads/registry.h"
#include "workloads/training.h"
#include "workloads/workload.h"

namespace trainbench {
namespace {

const std::string kData = TRAINBENCH_TEST_DATA;

// LlamaForCausalLM's parameters from its shapes (Hugging Face's modeling_llama.py and modeling_qwen2.py),
// vocab V, width H, MLP width I, L blocks, q query heads and k key/value heads of d dims: embed_tokens
// V·H; per block q_proj H·qd, k_proj and v_proj H·kd each, o_proj qd·H, gate_proj and up_proj H·I each,
// down_proj I·H, two RMSNorm weights 2H, plus Qwen 2's q/k/v biases qd + 2kd; the final norm H; an
// untied lm_head V·H more.
int64_t llama_parameters(int64_t v, int64_t h, int64_t i, int64_t l, int64_t q, int64_t k, int64_t d, bool tied,
                         bool qkv_bias) {
  const int64_t block = h * q * d + 2 * h * k * d + q * d * h + 3 * h * i + 2 * h + (qkv_bias ? q * d + 2 * k * d : 0);
  return v * h + l * block + h + (tied ? 0 : v * h);
}

// The published models (their Hugging Face model cards and config.json files): the shapes and the
// parameter count each reports. The count is not read from the code: the formula above derives it from
// the published shapes, and the test checks the named size carries exactly those shapes.
struct Published {
  const char* name;
  int64_t vocab, hidden, intermediate, layers, heads, kv_heads, head_dim;
  bool tied, qkv_bias;
  int64_t parameters;
};
const Published kPublished[] = {
    {"llama-3.2-1b", 128256, 2048, 8192, 16, 32, 8, 64, true, false, 1'235'814'400},
    {"llama-3.2-3b", 128256, 3072, 8192, 28, 24, 8, 128, true, false, 3'212'749'824},
    {"llama-3.1-8b", 128256, 4096, 14336, 32, 32, 8, 128, false, false, 8'030'261'248},
    {"mistral-7b", 32000, 4096, 14336, 32, 32, 8, 128, false, false, 7'241'732'096},
    {"qwen2.5-0.5b", 151936, 896, 4864, 24, 14, 2, 64, true, true, 494'032'768},
    {"qwen2.5-7b", 152064, 3584, 18944, 28, 28, 4, 128, false, true, 7'615'616'512},
    {"smollm2-135m", 49152, 576, 1536, 30, 9, 3, 64, true, false, 134'515'008},
};

TEST(Llama, PublishedSizesAndParameterCounts) {
  for (const Published& p : kPublished) {
    SCOPED_TRACE(p.name);
    const models::LlamaConfig c = models::llama_size(p.name);
    EXPECT_EQ(c.vocab, p.vocab);
    EXPECT_EQ(c.hidden, p.hidden);
    EXPECT_EQ(c.intermediate, p.intermediate);
    EXPECT_EQ(c.layers, p.layers);
    EXPECT_EQ(c.heads, p.heads);
    EXPECT_EQ(c.kv_heads, p.kv_heads);
    EXPECT_EQ(c.head_dim, p.head_dim);
    EXPECT_EQ(c.tie_embeddings, p.tied);
    EXPECT_EQ(c.qkv_bias, p.qkv_bias);
    EXPECT_FALSE(c.o_bias);
    EXPECT_FALSE(c.mlp_bias);
    EXPECT_EQ(llama_parameters(p.vocab, p.hidden, p.intermediate, p.layers, p.heads, p.kv_heads, p.head_dim, p.tied,
                               p.qkv_bias),
              p.parameters);
  }
  EXPECT_THROW(models::llama_size("llama-70b"), std::invalid_argument);
}

// Each named size is its model's config.json (tests/fixtures/hf-configs/, as published on the Hugging Face
// hub) read by the config reader, field by field.
TEST(Llama, NamedSizesAreTheirPublishedConfigs) {
  for (const Published& p : kPublished) {
    SCOPED_TRACE(p.name);
    const models::LlamaConfig a = models::llama_size(p.name);
    const models::LlamaConfig b = models::read_llama_config(kData + "/hf-configs/" + p.name + ".json");
    EXPECT_EQ(a.model_type, b.model_type);
    EXPECT_EQ(a.vocab, b.vocab);
    EXPECT_EQ(a.hidden, b.hidden);
    EXPECT_EQ(a.intermediate, b.intermediate);
    EXPECT_EQ(a.layers, b.layers);
    EXPECT_EQ(a.heads, b.heads);
    EXPECT_EQ(a.kv_heads, b.kv_heads);
    EXPECT_EQ(a.head_dim, b.head_dim);
    EXPECT_EQ(a.rope_theta, b.rope_theta);
    EXPECT_EQ(a.rope_scaling, b.rope_scaling);
    EXPECT_EQ(a.rope_factor, b.rope_factor);
    EXPECT_EQ(a.rope_low_freq_factor, b.rope_low_freq_factor);
    EXPECT_EQ(a.rope_high_freq_factor, b.rope_high_freq_factor);
    EXPECT_EQ(a.rope_original_max_pos, b.rope_original_max_pos);
    EXPECT_EQ(a.rms_norm_eps, b.rms_norm_eps);
    EXPECT_EQ(a.tie_embeddings, b.tie_embeddings);
    EXPECT_EQ(a.qkv_bias, b.qkv_bias);
    EXPECT_EQ(a.o_bias, b.o_bias);
    EXPECT_EQ(a.mlp_bias, b.mlp_bias);
    EXPECT_EQ(a.max_pos, b.max_pos);
    EXPECT_EQ(a.sliding_window, b.sliding_window);
  }
}

models::LlamaConfig tiny_config(bool tied, bool bias, int64_t kv_heads) {
  models::LlamaConfig c = models::llama_size("llama-tiny");
  c.tie_embeddings = tied;
  c.qkv_bias = bias;
  c.kv_heads = kv_heads;
  return c;
}

// ... and a built model has exactly the formula's parameters (tiny shapes, tied and untied, with and
// without biases, multi-head, grouped and multi-query).
TEST(Llama, BuiltModelHasTheFormulasParameters) {
  for (bool tied : {true, false}) {
    for (bool bias : {false, true}) {
      for (int64_t kv : {4, 2, 1}) {
        const models::LlamaConfig c = tiny_config(tied, bias, kv);
        SCOPED_TRACE(std::to_string(tied) + std::to_string(bias) + std::to_string(kv));
        models::Llama m(c);
        const int64_t n =
            llama_parameters(c.vocab, c.hidden, c.intermediate, c.layers, c.heads, kv, c.head_dim, tied, bias);
        EXPECT_EQ(m->parameter_count(), n);
        EXPECT_EQ(m->mfu_parameter_count(), tied ? n : n - c.vocab * c.hidden);
        EXPECT_EQ(m->block_parameter_count(), n - c.vocab * c.hidden * (tied ? 1 : 2) - c.hidden);
      }
    }
  }
}

// The logits of both fixture models against scripts/fixtures/make-llama-reference.py's float64 numpy forward. The
// fixture's config is a Hugging Face config.json object, read by the config reader; the weights come
// from the fixture's formula, by Hugging Face's names ("model." dropped; Linear weights are (out, in) on
// both sides). The tolerance, 1e-5, is about 3x the float32 rounding the script measures (its float32
// forward is 3.6e-6 from the float64 one) and five orders below the smallest mistake it must see: RoPE
// pairing dimensions (2i, 2i+1) instead of (i, i + d/2) moves the logits by 3.1 or more, the key/value
// heads repeated in the other order by 6.8, Llama 3.1's scaling left out by 4.1 (the script prints them).
void fill_from_reference(models::Llama& m, const nlohmann::json& spec, const std::vector<double>& phase) {
  torch::NoGradGuard no_grad;
  auto params = m->named_parameters();
  int64_t p = 0;
  for (const auto& s : spec) {
    std::string name = s.at("name").get<std::string>();
    const auto shape = s.at("shape").get<std::vector<int64_t>>();
    const double base = s.at("base").get<double>(), scale = s.at("scale").get<double>();
    torch::Tensor values = torch::empty(shape, torch::kFloat);
    float* v = values.data_ptr<float>();
    for (int64_t k = 0; k < values.numel(); ++k) {
      const double x = static_cast<double>(k);
      v[k] = static_cast<float>(base + scale * std::sin(phase[0] * x + phase[1] * x * x + phase[2] * p));
    }
    ++p;
    if (name.rfind("model.", 0) == 0) name = name.substr(6);
    torch::Tensor* target = params.find(name);
    ASSERT_NE(target, nullptr) << name << " is not a parameter of models::Llama";
    ASSERT_EQ(target->sizes().vec(), values.sizes().vec()) << name;
    target->copy_(values);
  }
  EXPECT_EQ(p, static_cast<int64_t>(params.size())) << "the fixture fills every parameter, each once";
}

TEST(Llama, LogitsMatchAnIndependentForward) {
  std::ifstream in(kData + "/llama_reference.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json j = nlohmann::json::parse(in);
  const auto phase = j.at("phase").get<std::vector<double>>();
  ASSERT_EQ(j.at("models").size(), 2u);
  for (const auto& fixture : j.at("models")) {
    const std::string name = fixture.at("name").get<std::string>();
    const models::LlamaConfig c = models::parse_llama_config(fixture.at("config").dump(), "fixture " + name);
    const auto tokens = fixture.at("tokens").get<std::vector<std::vector<int64_t>>>();
    const auto reference = fixture.at("logits").get<std::vector<std::vector<std::vector<double>>>>();
    const int64_t n = static_cast<int64_t>(tokens.size()), t = static_cast<int64_t>(tokens.at(0).size());
    torch::Tensor ids = torch::empty({n, t}, torch::kLong), expected = torch::empty({n, t, c.vocab}, torch::kDouble);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < t; ++k) {
        ids[i][k] = tokens[i][k];
        for (int64_t x = 0; x < c.vocab; ++x) expected[i][k][x] = reference[i][k][x];
      }
    }
    for (const std::string& kernel : models::available_attention_kernels()) {
      if (kernel != "math" && kernel != "sdpa") continue;
      SCOPED_TRACE(name + " " + kernel);
      const models::AttentionKernel kind = models::attention_kernel_from(kernel);
      models::select_sdpa_backends(kind);
      models::Llama m(c, kind);
      fill_from_reference(m, fixture.at("parameters"), phase);
      if (HasFatalFailure()) return;
      m->eval();
      torch::NoGradGuard no_grad;
      const torch::Tensor logits = m->forward(ids);
      ASSERT_EQ(logits.sizes().vec(), expected.sizes().vec());
      EXPECT_LT((logits.to(torch::kDouble) - expected).abs().max().item<double>(), 1e-5);
    }
  }
  models::select_sdpa_backends(models::AttentionKernel::sdpa);
}

WorkloadOptions tiny(Params extra = {}, int64_t batch = 2) {
  WorkloadOptions o;
  o.model = "llama";
  o.params = {{"size", "llama-tiny"}, {"seq", "8"}};
  for (const auto& [k, v] : extra) o.params[k] = v;
  o.params = effective_params(*find_workload("llama"), o.params);
  o.batch = batch;
  return o;
}

// Counted FLOPs by hand for one sequence of T tokens (llama-tiny: H 64, I 160, L 2, 4 query heads and 2
// key/value heads of 16 dims, V 512, tied): per block q_proj 2·T·H·64, k_proj and v_proj 2·T·H·32 each,
// q·kᵀ and probs·v 2·T·T·64 each (all query heads), o_proj 2·T·64·H, gate, up and down 2·T·H·I each;
// the LM head 2·T·H·V. Every product has both gradients: training = 3 × forward. Model FLOPs: tokens ·
// (6 N + 12 L A T), N all parameters (tied: the embedding is the head's weight), A = 4 · 16.
TEST(Llama, TinyFlopsAndModelFlopsByFormula) {
  const double h = 64, i = 160, l = 2, a = 64, kv = 32, v = 512, t = 8, batch = 2;
  auto w = make_workload(tiny({}, 2));
  const double forward =
      batch * (l * (2 * t * h * (a + 2 * kv) + 2 * 2 * t * t * a + 2 * t * a * h + 3 * 2 * t * h * i) + 2 * t * h * v);
  EXPECT_DOUBLE_EQ(w->step_flops().forward, forward);
  EXPECT_DOUBLE_EQ(w->flops_per_step(), 3.0 * forward);
  const int64_t n = llama_parameters(512, 64, 160, 2, 4, 2, 16, true, false);
  EXPECT_EQ(w->parameters(), n);
  EXPECT_EQ(w->tokens_per_step(), 16);
  EXPECT_DOUBLE_EQ(w->model_flops_per_step(), batch * t * (6.0 * n + 12.0 * l * a * t));
  EXPECT_EQ(w->hardware_flops_per_step(), 0.0);
  auto c = make_workload(tiny({{"checkpoint", "1"}}, 2));
  const double blocks = static_cast<double>(n - 512 * 64 - 64);
  EXPECT_DOUBLE_EQ(c->hardware_flops_per_step(),
                   w->model_flops_per_step() + batch * t * (2.0 * blocks + 4.0 * l * a * t));
  // Untied: N leaves the input embedding out (a lookup) and counts the head.
  auto u = make_workload(tiny({{"size", "smollm2-135m"}, {"layers", "1"}, {"vocab", "300"}, {"seq", "4"}}, 1));
  const int64_t smol = llama_parameters(300, 576, 1536, 1, 9, 3, 64, true, false);
  EXPECT_EQ(u->parameters(), smol);
  EXPECT_DOUBLE_EQ(u->model_flops_per_step(), 4.0 * (6.0 * smol + 12.0 * 1 * 576 * 4));
}

TEST(Llama, TinyTrainsWithFallingLoss) {
  for (const char* checkpoint : {"0", "1"}) {
    SCOPED_TRACE(checkpoint);
    torch::manual_seed(0);
    auto o = tiny({{"checkpoint", checkpoint}}, 4);
    o.optimizer = "adamw";
    auto w = make_workload(o);
    std::vector<double> losses;
    for (int s = 0; s < 8; ++s) {
      w->step();
      losses.push_back(w->last_loss());
    }
    for (double x : losses) ASSERT_TRUE(std::isfinite(x));
    EXPECT_LT(losses[6] + losses[7], losses[0] + losses[1]);
    EXPECT_NEAR(losses[0], std::log(512.0), 0.2) << "uniform logits at N(0, 0.02) init";
  }
}

// bf16 autocast and bf16-pure train the tiny model to the fp32 first loss within bf16's rounding (the
// bound as in test_gpt.cpp: logits under 0.5 at init, a few 2^-8 roundings, cross-entropy moving at most
// twice the largest logit change), and neither gives fp32's loss bit for bit.
TEST(Llama, Bf16LossesAreTheFp32LossWithinBf16Rounding) {
  auto first_loss = [](const char* precision) {
    auto o = tiny({{"checkpoint", "1"}});
    o.precision = parse_precision(precision);
    torch::manual_seed(0);
    auto w = make_workload(o);
    w->step();
    return w->last_loss();
  };
  const double fp32 = first_loss("fp32");
  for (const char* p : {"bf16", "bf16-pure"}) {
    SCOPED_TRACE(p);
    const double x = first_loss(p);
    EXPECT_NEAR(x, fp32, 0.03);
    EXPECT_NE(x, fp32);
  }
}

// Position i's logits depend on tokens 0..i only.
TEST(Llama, AttentionIsCausal) {
  torch::manual_seed(1);
  models::Llama m(tiny_config(false, true, 2));
  m->eval();
  torch::NoGradGuard no_grad;
  const auto ids = torch::randint(0, 512, {1, 9}, torch::kLong);
  auto changed = ids.clone();
  changed[0][6] = (ids[0][6].item<int64_t>() + 1) % 512;
  const auto a = m->forward(ids), b = m->forward(changed);
  EXPECT_TRUE(torch::equal(a.narrow(1, 0, 6), b.narrow(1, 0, 6)));
  EXPECT_FALSE(torch::allclose(a.narrow(1, 6, 1), b.narrow(1, 6, 1)));
}

// With and without checkpointing, the same loss and gradients from the same weights and batch.
TEST(Llama, CheckpointingGivesTheSameGradients) {
  torch::manual_seed(3);
  const models::LlamaConfig c = tiny_config(false, true, 2);
  models::Llama plain(c), checkpointed(c);
  {
    torch::NoGradGuard no_grad;
    auto src = plain->parameters();
    auto dst = checkpointed->parameters();
    for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
  }
  checkpointed->checkpoint_blocks = true;
  const auto ids = torch::randint(0, 512, {2, 8}, torch::kLong);
  const auto targets = torch::randint(0, 512, {16}, torch::kLong);
  auto loss_of = [&](models::Llama& m) {
    const auto l = torch::nn::functional::cross_entropy(m->forward(ids).reshape({-1, 512}), targets);
    l.backward();
    return l.item<double>();
  };
  EXPECT_DOUBLE_EQ(loss_of(plain), loss_of(checkpointed));
  const auto a = plain->named_parameters(), b = checkpointed->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(b[i].value().grad().defined()) << b[i].key();
    EXPECT_TRUE(torch::allclose(a[i].value().grad(), b[i].value().grad(), 1e-5, 1e-6)) << a[i].key();
  }
}

// Llama 3.1's scaling by its definition (Meta's reference apply_scaling, restated): for factor 8,
// low_freq_factor 1, high_freq_factor 4 and an original context of 8192, a frequency whose wavelength is
// under 2048 stays, one over 8192 is divided by 8, and one between is blended.
TEST(Llama, RopeScalingBands) {
  models::LlamaConfig c = models::llama_size("llama-3.1-8b");
  const std::vector<float> scaled = models::rope_inverse_frequencies(c);
  c.rope_scaling = models::RopeScaling::none;
  const std::vector<float> plain = models::rope_inverse_frequencies(c);
  ASSERT_EQ(scaled.size(), 64u);
  int kept = 0, divided = 0, blended = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_FLOAT_EQ(plain[i], static_cast<float>(std::pow(500000.0, -2.0 * static_cast<double>(i) / 128.0)));
    const double wavelen = 2 * M_PI / plain[i];
    if (wavelen < 2048) {
      EXPECT_FLOAT_EQ(scaled[i], plain[i]);
      ++kept;
    } else if (wavelen > 8192) {
      EXPECT_FLOAT_EQ(scaled[i], plain[i] / 8.0f);
      ++divided;
    } else {
      const double s = (8192.0 / wavelen - 1.0) / 3.0;
      EXPECT_NEAR(scaled[i], (1 - s) * plain[i] / 8.0 + s * plain[i], 1e-6 * plain[i]);
      ++blended;
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(blended, 0);
}

// Bad config.json files: one line naming the field, before any tensor is made.
std::string config_error(const std::string& text) {
  try {
    (void)models::parse_llama_config(text, "c.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string good_config_with(const std::string& key, const nlohmann::json& value) {
  std::ifstream in(kData + "/hf-configs/llama-3.2-1b.json");
  nlohmann::json j = nlohmann::json::parse(in);
  if (value.is_discarded()) {
    j.erase(key);
  } else {
    j[key] = value;
  }
  return j.dump();
}

TEST(Llama, BadConfigsAreRefusedNamingTheField) {
  const nlohmann::json drop = nlohmann::json(nlohmann::json::value_t::discarded);
  struct Bad {
    std::string text, fragment;
  };
  const std::vector<Bad> bad = {
      {"{\"model_type\": \"llama\", ", "is not JSON"},
      {"[1, 2]", "not a JSON object"},
      {good_config_with("hidden_size", drop), "field 'hidden_size' is missing"},
      {good_config_with("model_type", drop), "field 'model_type' is missing"},
      {good_config_with("hidden_size", 2048.5), "field 'hidden_size' must be an integer"},
      {good_config_with("num_hidden_layers", "16"), "field 'num_hidden_layers' must be an integer"},
      {good_config_with("hidden_size", 1000000000), "field 'hidden_size' must be between 1 and 65536"},
      {good_config_with("vocab_size", 0), "field 'vocab_size' must be between 2"},
      {good_config_with("num_key_value_heads", 5), "field 'num_key_value_heads' 5 does not divide"},
      {good_config_with("head_dim", 63), "field 'head_dim' must be even"},
      {good_config_with("model_type", "gemma2"), "field 'model_type' is 'gemma2'"},
      {good_config_with("num_local_experts", 8), "field 'num_local_experts' asks for mixture of experts"},
      {good_config_with("num_experts", 60), "field 'num_experts' asks for mixture of experts"},
      {good_config_with("hidden_act", "gelu"), "field 'hidden_act' is 'gelu'"},
      {good_config_with("rope_interleaved", true), "field 'rope_interleaved'"},
      {good_config_with("tie_word_embeddings", 1), "field 'tie_word_embeddings' must be true or false"},
      {good_config_with("rms_norm_eps", -1), "field 'rms_norm_eps' must be > 0"},
      {good_config_with("rope_theta", "big"), "field 'rope_theta' must be a number"},
      {good_config_with("some_new_field", 3), "field 'some_new_field' is not a field"},
      {good_config_with("rope_scaling", nlohmann::json{{"rope_type", "yarn"}, {"factor", 4.0}}),
       "field 'rope_scaling.rope_type' is 'yarn'"},
      {good_config_with("rope_scaling", nlohmann::json{{"rope_type", "llama3"}, {"factor", 8.0}}),
       "field 'rope_scaling.low_freq_factor' is missing"},
      {good_config_with("use_sliding_window", true), "field 'use_sliding_window'"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.fragment);
    const std::string why = config_error(b.text);
    EXPECT_NE(why.find(b.fragment), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    EXPECT_EQ(why.rfind("config.json c.json", 0), 0u) << why;
  }
  // Qwen 2 with its window off (every Qwen 2.5 config), and a config with no head_dim whose heads divide
  // the width, are fine; heads that do not divide it without a head_dim are not.
  std::ifstream q(kData + "/hf-configs/qwen2.5-0.5b.json");
  const std::string qwen((std::istreambuf_iterator<char>(q)), std::istreambuf_iterator<char>());
  EXPECT_EQ(config_error(qwen), "");
  nlohmann::json j = nlohmann::json::parse(good_config_with("head_dim", drop));
  EXPECT_EQ(models::parse_llama_config(j.dump(), "c.json").head_dim, 64);
  j["num_attention_heads"] = 30;
  j["num_key_value_heads"] = 10;
  EXPECT_NE(config_error(j.dump()).find("field 'num_attention_heads' 30 does not divide hidden_size 2048"),
            std::string::npos);
}

// Through the program: a bad config, a sequence beyond Mistral's window, and both size and config are
// refused by the plan (exit 2, one line) before anything runs.
TEST(Llama, CliRefusesBadConfigs) {
  const auto dir = test::temp_dir("llama", "cli");
  {
    std::ofstream(dir / "moe.json") << good_config_with("num_local_experts", 8);
    std::ofstream(dir / "broken.json") << "{\"hidden_size\": ";
  }
  const std::string run = "run --model llama --batch 1 --min-steps 1 --max-steps 1 --set ";
  EXPECT_TRUE(test::refused(test::run_trainbench(run + "config=" + (dir / "moe.json").string(), dir),
                            {"num_local_experts", "mixture of experts"}));
  EXPECT_TRUE(
      test::refused(test::run_trainbench(run + "config=" + (dir / "broken.json").string(), dir), {"is not JSON"}));
  EXPECT_TRUE(test::refused(test::run_trainbench(run + "config=" + (dir / "missing.json").string(), dir),
                            {"missing.json", "cannot read"}));
  EXPECT_TRUE(
      test::refused(test::run_trainbench(run + "size=mistral-7b --set seq=8192", dir), {"sliding_window 4096"}));
  EXPECT_TRUE(test::refused(
      test::run_trainbench(run + "size=qwen2.5-7b --set config=" + kData + "/hf-configs/qwen2.5-0.5b.json", dir),
      {"not both"}));
}

}  // namespace
}  // namespace trainbench
