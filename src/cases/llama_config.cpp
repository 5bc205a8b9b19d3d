#include "cases/llama_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/value_rules.h"

namespace trainbench::models {
namespace {

// The one rule for each size of the shape, wherever it comes from (a named size, a config.json, an
// override): {lo, hi, false, integer}.
constexpr NumberRule kVocab{2.0, 10'000'000.0, false, true};
constexpr NumberRule kHidden{1.0, 65536.0, false, true};
constexpr NumberRule kIntermediate{1.0, 1048576.0, false, true};
constexpr NumberRule kLayers{1.0, 1024.0, false, true};
constexpr NumberRule kHeads{1.0, 1024.0, false, true};
constexpr NumberRule kHeadDim{2.0, 1024.0, false, true};
constexpr NumberRule kMaxPos{1.0, 100'000'000.0, false, true};
constexpr NumberRule kRopeTheta{0.0, 1e12, true, false};
constexpr NumberRule kRopeFactor{0.0, 1e6, true, false};
constexpr NumberRule kRmsEps{0.0, 1.0, true, false};
constexpr NumberRule kDropout{0.0, 0.9, false, false};

// Each named size from its model's config.json on the Hugging Face hub (the repository in the comment).
std::map<std::string, LlamaConfig> build_sizes() {
  std::map<std::string, LlamaConfig> s;
  auto llama3 = [](LlamaConfig c, double factor) {
    c.rope_theta = 500000.0;
    c.rope_scaling = RopeScaling::llama3;
    c.rope_factor = factor;
    c.rope_low_freq_factor = 1.0;
    c.rope_high_freq_factor = 4.0;
    c.rope_original_max_pos = 8192;
    c.rms_norm_eps = 1e-5;
    c.max_pos = 131072;
    c.vocab = 128256;
    return c;
  };
  LlamaConfig c;
  // meta-llama/Llama-3.2-1B: 1,235,814,400 parameters.
  c.hidden = 2048, c.intermediate = 8192, c.layers = 16, c.heads = 32, c.kv_heads = 8, c.head_dim = 64;
  c.tie_embeddings = true;
  s["llama-3.2-1b"] = llama3(c, 32.0);
  // meta-llama/Llama-3.2-3B: 3,212,749,824.
  c.hidden = 3072, c.intermediate = 8192, c.layers = 28, c.heads = 24, c.kv_heads = 8, c.head_dim = 128;
  s["llama-3.2-3b"] = llama3(c, 32.0);
  // meta-llama/Llama-3.1-8B: 8,030,261,248.
  c.hidden = 4096, c.intermediate = 14336, c.layers = 32, c.heads = 32, c.kv_heads = 8, c.head_dim = 128;
  c.tie_embeddings = false;
  s["llama-3.1-8b"] = llama3(c, 8.0);
  // mistralai/Mistral-7B-v0.1: 7,241,732,096. Its sliding window of 4096 is full causal attention at
  // sequences up to 4096, the only ones it takes.
  LlamaConfig m;
  m.model_type = "mistral";
  m.vocab = 32000, m.hidden = 4096, m.intermediate = 14336, m.layers = 32, m.heads = 32, m.kv_heads = 8;
  m.head_dim = 128, m.rope_theta = 10000.0, m.rms_norm_eps = 1e-5, m.max_pos = 32768, m.sliding_window = 4096;
  s["mistral-7b"] = m;
  // Qwen/Qwen2.5-0.5B: 494,032,768 (q, k and v with bias, tied).
  LlamaConfig q;
  q.model_type = "qwen2";
  q.vocab = 151936, q.hidden = 896, q.intermediate = 4864, q.layers = 24, q.heads = 14, q.kv_heads = 2;
  q.head_dim = 64, q.rope_theta = 1e6, q.rms_norm_eps = 1e-6, q.max_pos = 32768, q.tie_embeddings = true;
  q.qkv_bias = true;
  s["qwen2.5-0.5b"] = q;
  // Qwen/Qwen2.5-7B: 7,615,616,512.
  q.vocab = 152064, q.hidden = 3584, q.intermediate = 18944, q.layers = 28, q.heads = 28, q.kv_heads = 4;
  q.head_dim = 128, q.max_pos = 131072, q.tie_embeddings = false;
  s["qwen2.5-7b"] = q;
  // HuggingFaceTB/SmolLM2-135M: 134,515,008 (a real Llama small enough for a CPU).
  LlamaConfig t;
  t.vocab = 49152, t.hidden = 576, t.intermediate = 1536, t.layers = 30, t.heads = 9, t.kv_heads = 3;
  t.head_dim = 64, t.rope_theta = 100000.0, t.rms_norm_eps = 1e-5, t.max_pos = 8192, t.tie_embeddings = true;
  s["smollm2-135m"] = t;
  // llama-tiny: a test size (every part of a Llama 3.2 at a width a test trains in milliseconds).
  LlamaConfig tiny = llama3(c, 32.0);
  tiny.vocab = 512, tiny.hidden = 64, tiny.intermediate = 160, tiny.layers = 2, tiny.heads = 4, tiny.kv_heads = 2;
  tiny.head_dim = 16, tiny.tie_embeddings = true, tiny.max_pos = 2048;
  s["llama-tiny"] = tiny;
  for (auto& [name, config] : s) config.source = name;
  return s;
}

const std::map<std::string, LlamaConfig>& sizes() {
  static const std::map<std::string, LlamaConfig> s = build_sizes();
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

// A config's fields that say nothing about the network trained from scratch: provenance, token ids,
// initialisation's spread, generation defaults and PretrainedConfig's bookkeeping.
const std::set<std::string>& ignored_fields() {
  // clang-format off
  static const std::set<std::string> f = {
      "_name_or_path", "architectures", "torch_dtype", "dtype", "transformers_version", "bos_token_id",
      "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id", "initializer_range", "use_cache",
      "tokenizer_class", "is_llama_config", "max_window_layers", "pretraining_tp", "return_dict",
      "output_hidden_states", "output_attentions", "torchscript", "use_bfloat16", "tf_legacy_loss", "pruned_heads",
      "chunk_size_feed_forward", "is_encoder_decoder", "is_decoder", "add_cross_attention", "tie_encoder_decoder",
      "cross_attention_hidden_size", "max_length", "min_length", "do_sample", "early_stopping", "num_beams",
      "num_beam_groups", "diversity_penalty", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty",
      "length_penalty", "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids",
      "num_return_sequences", "output_scores", "return_dict_in_generate", "forced_bos_token_id",
      "forced_eos_token_id", "remove_invalid_values", "exponential_decay_length_penalty", "suppress_tokens",
      "begin_suppress_tokens", "finetuning_task", "id2label", "label2id", "prefix", "task_specific_params",
      "problem_type"};
  // clang-format on
  return f;
}

// Fields that change the network in ways this model does not build: refused when present.
const std::map<std::string, std::string>& unimplemented_fields() {
  static const std::map<std::string, std::string> f = {
      {"num_experts", "mixture of experts"},
      {"num_local_experts", "mixture of experts"},
      {"num_experts_per_tok", "mixture of experts"},
      {"moe_intermediate_size", "mixture of experts"},
      {"shared_expert_intermediate_size", "mixture of experts"},
      {"decoder_sparse_step", "mixture of experts"},
      {"router_aux_loss_coef", "mixture of experts"},
      {"output_router_logits", "mixture of experts"},
      {"mlp_only_layers", "mixture of experts"},
      {"layer_types", "per-layer attention types"},
      {"partial_rotary_factor", "partial rotary embeddings"},
      {"quantization_config", "quantized weights"},
      {"auto_map", "custom modelling code"},
  };
  return f;
}

class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw std::invalid_argument("config.json " + path_ + ": field '" + field + "' " + why);
  }
  bool has(const std::string& field) const { return j_.contains(field) && !j_.at(field).is_null(); }

  int64_t integer(const std::string& field, const NumberRule& rule) const {
    if (!has(field)) fail(field, "is missing");
    return integer_of(field, j_.at(field), rule);
  }
  int64_t integer_or(const std::string& field, const NumberRule& rule, int64_t fallback) const {
    return has(field) ? integer_of(field, j_.at(field), rule) : fallback;
  }
  int64_t integer_of(const std::string& field, const nlohmann::json& v, const NumberRule& rule) const {
    if (!v.is_number_integer() && !v.is_number_unsigned()) fail(field, "must be an integer, not " + v.dump());
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(rule.hi)) {
      fail(field, number_problem(1e300, rule) + ", not " + v.dump());
    }
    const auto x = v.get<int64_t>();
    if (const std::string why = number_problem(static_cast<double>(x), rule); !why.empty()) {
      fail(field, why + ", not " + v.dump());
    }
    return x;
  }
  double number_of(const std::string& field, const nlohmann::json& v, const NumberRule& rule) const {
    if (!v.is_number()) fail(field, "must be a number, not " + v.dump());
    const auto x = v.get<double>();
    if (const std::string why = number_problem(x, rule); !why.empty()) fail(field, why + ", not " + v.dump());
    return x;
  }
  double number_or(const std::string& field, const NumberRule& rule, double fallback) const {
    return has(field) ? number_of(field, j_.at(field), rule) : fallback;
  }
  bool boolean_or(const std::string& field, bool fallback) const {
    if (!has(field)) return fallback;
    if (!j_.at(field).is_boolean()) fail(field, "must be true or false, not " + j_.at(field).dump());
    return j_.at(field).get<bool>();
  }
  std::string text(const std::string& field) const {
    if (!has(field)) fail(field, "is missing");
    if (!j_.at(field).is_string()) fail(field, "must be a string, not " + j_.at(field).dump());
    return j_.at(field).get<std::string>();
  }
  const nlohmann::json& at(const std::string& field) const { return j_.at(field); }

 private:
  const nlohmann::json& j_;
  std::string path_;
};

// rope_scaling (or transformers 5's rope_parameters, which also carries rope_theta) into `c`.
void read_rope(const ConfigReader& r, const std::string& field, LlamaConfig& c) {
  const nlohmann::json& s = r.at(field);
  if (!s.is_object()) r.fail(field, "must be an object or null, not " + s.dump());
  const ConfigReader sub(s, "");
  auto name = [&](const std::string& key) { return field + "." + key; };
  std::string type = "default";
  for (const char* key : {"rope_type", "type"}) {
    if (sub.has(key)) {
      if (!s.at(key).is_string()) r.fail(name(key), "must be a string, not " + s.at(key).dump());
      type = s.at(key).get<std::string>();
    }
  }
  auto number = [&](const std::string& key, const NumberRule& rule, double fallback) {
    return sub.has(key) ? r.number_of(name(key), s.at(key), rule) : fallback;
  };
  std::set<std::string> known = {"rope_type", "type"};
  if (field == "rope_parameters") {
    c.rope_theta = number("rope_theta", kRopeTheta, c.rope_theta);
    known.insert("rope_theta");
  }
  if (type == "default") {
    c.rope_scaling = RopeScaling::none;
  } else if (type == "linear" || type == "llama3") {
    if (!sub.has("factor")) r.fail(name("factor"), "is missing (rope_type " + type + ")");
    c.rope_factor = r.number_of(name("factor"), s.at("factor"), kRopeFactor);
    known.insert("factor");
    c.rope_scaling = type == "linear" ? RopeScaling::linear : RopeScaling::llama3;
    if (type == "llama3") {
      for (const char* key : {"low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}) {
        if (!sub.has(key)) r.fail(name(key), "is missing (rope_type llama3)");
        known.insert(key);
      }
      c.rope_low_freq_factor = r.number_of(name("low_freq_factor"), s.at("low_freq_factor"), kRopeFactor);
      c.rope_high_freq_factor = r.number_of(name("high_freq_factor"), s.at("high_freq_factor"), kRopeFactor);
      c.rope_original_max_pos =
          r.integer_of(name("original_max_position_embeddings"), s.at("original_max_position_embeddings"), kMaxPos);
      if (c.rope_high_freq_factor <= c.rope_low_freq_factor) {
        r.fail(name("high_freq_factor"), "must be above low_freq_factor");
      }
    }
  } else {
    r.fail(name("rope_type"), "is '" + type + "': trainbench implements default, linear and llama3 rope scaling");
  }
  for (const auto& [key, value] : s.items()) {
    if (known.count(key) == 0) r.fail(name(key), "is not one rope_type " + type + " takes");
  }
}

}  // namespace

const std::vector<std::string>& llama_size_names() {
  static const std::vector<std::string> names = {"llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "mistral-7b",
                                                 "qwen2.5-0.5b", "qwen2.5-7b",   "smollm2-135m", "llama-tiny"};
  return names;
}

LlamaConfig llama_size(const std::string& name) {
  const auto it = sizes().find(name);
  if (it == sizes().end()) {
    throw std::invalid_argument("unknown llama size '" + name + "' (expected one of: " + join(llama_size_names()) +
                                ")");
  }
  return it->second;
}

void check_llama_config(const LlamaConfig& c, const std::string& where) {
  auto fail = [&](const std::string& field, const std::string& why) {
    throw std::invalid_argument(where + ": " + field + " " + why);
  };
  auto in = [&](const char* field, int64_t v, const NumberRule& rule) {
    if (const std::string why = number_problem(static_cast<double>(v), rule); !why.empty()) {
      fail(field, why + ", not " + std::to_string(v));
    }
  };
  in("vocab", c.vocab, kVocab);
  in("hidden", c.hidden, kHidden);
  in("intermediate", c.intermediate, kIntermediate);
  in("layers", c.layers, kLayers);
  in("heads", c.heads, kHeads);
  in("kv_heads", c.kv_heads, kHeads);
  in("head_dim", c.head_dim, kHeadDim);
  if (c.head_dim % 2 != 0) fail("head_dim", "must be even (RoPE rotates pairs), not " + std::to_string(c.head_dim));
  if (c.heads % c.kv_heads != 0) {
    fail("kv_heads", std::to_string(c.kv_heads) + " does not divide heads " + std::to_string(c.heads));
  }
}

namespace {

// Every key of the config is one trainbench reads or knowingly ignores; one that asks for what the
// llama does not implement is refused by name.
void check_known_fields(const nlohmann::json& j, const ConfigReader& r) {
  const std::set<std::string> used = {"model_type",
                                      "vocab_size",
                                      "hidden_size",
                                      "intermediate_size",
                                      "num_hidden_layers",
                                      "num_attention_heads",
                                      "num_key_value_heads",
                                      "head_dim",
                                      "rope_theta",
                                      "rope_scaling",
                                      "rope_parameters",
                                      "rms_norm_eps",
                                      "tie_word_embeddings",
                                      "attention_bias",
                                      "mlp_bias",
                                      "max_position_embeddings",
                                      "sliding_window",
                                      "use_sliding_window",
                                      "attention_dropout",
                                      "hidden_act",
                                      "rope_interleaved",
                                      "use_mrope"};
  for (const auto& [key, value] : j.items()) {
    if (const auto u = unimplemented_fields().find(key); u != unimplemented_fields().end()) {
      r.fail(key, "asks for " + u->second + ", which trainbench's llama does not implement");
    }
    if (used.count(key) == 0 && ignored_fields().count(key) == 0) {
      r.fail(key, "is not a field of a llama, mistral or qwen2 config that trainbench knows");
    }
  }
}

// The fields that ask for what the llama does not implement: an activation, interleaved or multimodal
// RoPE, Qwen 2's sliding window; Mistral's window is read.
void read_unimplemented(const ConfigReader& r, LlamaConfig& c) {
  if (r.has("hidden_act") && r.text("hidden_act") != "silu") {
    r.fail("hidden_act", "is '" + r.text("hidden_act") + "': trainbench's llama implements silu (SwiGLU)");
  }
  if (r.boolean_or("rope_interleaved", false)) {
    r.fail("rope_interleaved", "is true: trainbench's llama rotates the halves of each head (Hugging Face's order)");
  }
  if (r.boolean_or("use_mrope", false)) r.fail("use_mrope", "is true: multimodal RoPE is not implemented");
  // Qwen 2 uses its window only with use_sliding_window; Mistral's applies whenever it is set.
  const bool window_on = c.model_type == "qwen2" ? r.boolean_or("use_sliding_window", false) : r.has("sliding_window");
  if (c.model_type == "qwen2" && window_on) {
    r.fail("use_sliding_window", "is true: sliding-window attention is not implemented");
  }
  if (c.model_type != "qwen2" && r.has("use_sliding_window")) {
    r.fail("use_sliding_window", "is not a field of a " + c.model_type + " config");
  }
  if (window_on) c.sliding_window = r.integer_or("sliding_window", kMaxPos, 0);
}

}  // namespace

LlamaConfig parse_llama_config(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string why = e.what();
    if (const size_t p = why.find("parse error"); p != std::string::npos) why = why.substr(p);
    throw std::invalid_argument("config.json " + path + " is not JSON: " + why);
  }
  if (!j.is_object()) throw std::invalid_argument("config.json " + path + " is not a JSON object");
  const ConfigReader r(j, path);
  LlamaConfig c;
  c.source = path;
  c.model_type = r.text("model_type");
  if (c.model_type != "llama" && c.model_type != "mistral" && c.model_type != "qwen2") {
    r.fail("model_type", "is '" + c.model_type + "': trainbench's llama builds llama, mistral and qwen2");
  }
  check_known_fields(j, r);
  c.vocab = r.integer("vocab_size", kVocab);
  c.hidden = r.integer("hidden_size", kHidden);
  c.intermediate = r.integer("intermediate_size", kIntermediate);
  c.layers = r.integer("num_hidden_layers", kLayers);
  c.heads = r.integer("num_attention_heads", kHeads);
  // Hugging Face's defaults where a config leaves a field out: MistralConfig's 8 key-value heads, the
  // others' one per query head.
  c.kv_heads = r.integer_or("num_key_value_heads", kHeads, c.model_type == "mistral" ? 8 : c.heads);
  if (c.heads % c.kv_heads != 0) {
    r.fail("num_key_value_heads",
           std::to_string(c.kv_heads) + " does not divide num_attention_heads " + std::to_string(c.heads));
  }
  if (r.has("head_dim")) {
    c.head_dim = r.integer_or("head_dim", kHeadDim, 0);
  } else {
    if (c.hidden % c.heads != 0) {
      r.fail("num_attention_heads", std::to_string(c.heads) + " does not divide hidden_size " +
                                        std::to_string(c.hidden) + " (and no head_dim)");
    }
    c.head_dim = c.hidden / c.heads;
  }
  if (c.head_dim % 2 != 0) r.fail("head_dim", "must be even (RoPE rotates pairs), not " + std::to_string(c.head_dim));
  c.rope_theta = r.number_or("rope_theta", kRopeTheta, 10000.0);
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    if (r.has(key)) read_rope(r, key, c);
  }
  c.rms_norm_eps = r.number_or("rms_norm_eps", kRmsEps, 1e-6);
  c.tie_embeddings = r.boolean_or("tie_word_embeddings", false);
  // Llama's attention_bias puts a bias on all four projections; Qwen 2's q, k and v always have one.
  const bool attention_bias = r.boolean_or("attention_bias", false);
  c.qkv_bias = attention_bias || c.model_type == "qwen2";
  c.o_bias = attention_bias;
  c.mlp_bias = r.boolean_or("mlp_bias", false);
  c.max_pos = r.integer_or("max_position_embeddings", kMaxPos, c.model_type == "llama" ? 2048 : 32768);
  c.attention_dropout = r.number_or("attention_dropout", kDropout, 0.0);
  read_unimplemented(r, c);
  check_llama_config(c, "config.json " + path);
  return c;
}

LlamaConfig read_llama_config(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::invalid_argument("config.json " + path + ": cannot read the file (" +
                                (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file") + ")");
  }
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("config.json " + path + ": cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::invalid_argument("config.json " + path + ": cannot read the file");
  return parse_llama_config(text.str(), path);
}

}  // namespace trainbench::models
