// The decoder language models, described: GPT-2 (gpt) and the Llama family (llama). Their shapes from
// the parameters are here, once: workloads/gpt.cpp and llama.cpp build the models from them.
#include "cases/decoder_info.h"

#include <algorithm>
#include <stdexcept>

#include "cases/attention_kernel.h"
#include "cases/descriptions.h"
#include "core/value_rules.h"

namespace trainbench {
namespace {

constexpr NumberRule kDropout{0.0, 0.9, false, false};

std::string size_help() {
  std::string names;
  for (const auto& n : models::llama_size_names()) names += (names.empty() ? "" : ", ") + n;
  return std::string("a published shape: ") + names + " (llama-tiny: a test size)";
}

}  // namespace

namespace models {

GptSize gpt_size(const std::string& name) {
  if (name == "small") return {12, 768};
  if (name == "medium") return {24, 1024};
  if (name == "large") return {36, 1280};
  if (name == "xl") return {48, 1600};
  throw std::invalid_argument("unknown GPT-2 size '" + name + "' (expected one of: small, medium, large, xl)");
}

}  // namespace models

GptShape gpt_shape_of(const Params& p) {
  const models::GptSize size = models::gpt_size(param_str(p, "size"));
  GptShape s;
  s.layers = param_int(p, "layers") > 0 ? param_int(p, "layers") : size.layers;
  s.hidden = param_int(p, "hidden") > 0 ? param_int(p, "hidden") : size.hidden;
  s.heads = param_int(p, "heads") > 0 ? param_int(p, "heads") : std::max<int64_t>(1, s.hidden / 64);
  s.vocab = param_int(p, "vocab");
  s.max_pos = param_int(p, "max_pos");
  (void)number_text_problem(param_str(p, "dropout"), kDropout, &s.dropout);
  return s;
}

models::LlamaConfig llama_config_of(const Params& p) {
  const std::string& file = param_str(p, "config");
  if (!file.empty() && param_str(p, "size") != kDefaultLlamaSize) {
    throw std::invalid_argument("llama: give size= or config=, not both");
  }
  models::LlamaConfig c = file.empty() ? models::llama_size(param_str(p, "size")) : models::read_llama_config(file);
  if (param_int(p, "layers") > 0) c.layers = param_int(p, "layers");
  if (param_int(p, "vocab") > 0) c.vocab = param_int(p, "vocab");
  models::check_llama_config(c, "llama " + c.source);
  const int64_t seq = param_int(p, "seq");
  if (c.sliding_window > 0 && seq > c.sliding_window) {
    throw std::invalid_argument("llama " + c.source + ": seq " + std::to_string(seq) + " exceeds its sliding_window " +
                                std::to_string(c.sliding_window) +
                                " (sliding-window attention is not implemented; at most the window it is full "
                                "causal attention)");
  }
  return c;
}

WorkloadInfo gpt_workload_info() {
  WorkloadInfo w;
  w.name = "gpt";
  w.family = "transformer";
  w.unit = "sequences/s";
  w.input = "seq 1024";
  w.default_batch = 8;
  w.data_kind = data::DataKind::tokens;
  w.description =
      "GPT-2 pre-training from scratch, Hugging Face's GPT2LMHeadModel (small 124.4M, medium 354.8M, large 774.0M, "
      "xl 1557.6M params): next-token loss; tokens/s and MFU";
  w.params = {
      {"size", "small", "GPT-2 size: small (L12 H768), medium (L24 H1024), large (L36 H1280), xl (L48 H1600)",
       one_of({"small", "medium", "large", "xl"})},
      {"layers", "0", "decoder blocks, 1 to 256; 0: from size", int_in_range(0, 256)},
      {"hidden", "0", "hidden width, 1 to 65536 (a multiple of heads), MLP 4x; 0: from size", int_in_range(0, 65536)},
      {"heads", "0", "attention heads, 1 to 1024 (must divide hidden); 0: hidden / 64", int_in_range(0, 1024)},
      {"vocab", "50257", "vocabulary size, 2 to 10000000", int_in_range(2, 10'000'000)},
      {"max_pos", "1024", "position-embedding length, 1 to 100000 (at least seq)", int_in_range(1, 100'000)},
      {"seq", "1024", "tokens per sequence, 1 to 100000 (at most max_pos)", int_in_range(1, 100'000)},
      {"dropout", "0", "dropout on embeddings, attention probabilities and residuals, 0 to 0.9 (GPT-2: 0.1)",
       [](const std::string& v) {
         const std::string why = number_text_problem(v, kDropout);
         if (!why.empty()) throw std::invalid_argument(why);
       }},
      {"checkpoint", "0", "1: recompute each block's activations in backward (activation checkpointing)",
       one_of({"0", "1"})},
      {"attention", models::default_attention_kernel(), models::attention_param_help(),
       [](const std::string& v) { (void)models::attention_kernel_from(v); }, /*kernel_choice=*/true},
  };
  w.check_together = [](const Params& p) {
    const GptShape o = gpt_shape_of(p);
    const int64_t seq = param_int(p, "seq");
    if (seq > o.max_pos) {
      throw std::invalid_argument("gpt: seq " + std::to_string(seq) + " exceeds max_pos " + std::to_string(o.max_pos));
    }
    if (o.hidden % o.heads != 0) {
      throw std::invalid_argument("gpt: heads " + std::to_string(o.heads) + " does not divide hidden " +
                                  std::to_string(o.hidden));
    }
  };
  w.depth = [](const Params& p) { return gpt_shape_of(p).layers; };
  return w;
}

WorkloadInfo llama_workload_info() {
  WorkloadInfo w;
  w.name = "llama";
  w.family = "transformer";
  w.unit = "sequences/s";
  w.input = "seq 2048";
  w.default_batch = 4;
  w.data_kind = data::DataKind::tokens;
  w.description =
      "Llama-architecture decoder pre-training from scratch (RMSNorm, RoPE, SwiGLU, grouped-query attention): "
      "Llama 3.2 1B/3B, 3.1 8B, Mistral 7B, Qwen2.5 0.5B/7B, SmolLM2 135M, or a Hugging Face config.json; "
      "next-token loss; tokens/s and MFU";
  w.params = {
      {"size", kDefaultLlamaSize, size_help(), one_of(models::llama_size_names())},
      {"config", "", "a Hugging Face config.json (model_type llama, mistral or qwen2) instead of size",
       [](const std::string& v) {
         if (!v.empty()) (void)models::read_llama_config(v);
       }},
      {"layers", "0", "decoder blocks, 1 to 1024; 0: the size's or config's", int_in_range(0, 1024)},
      {"vocab", "0", "vocabulary size, 2 to 10000000; 0: the size's or config's", int_in_range(0, 10'000'000)},
      {"seq", "2048", "tokens per sequence, 1 to 1000000", int_in_range(1, 1'000'000)},
      {"checkpoint", "0", "1: recompute each block's activations in backward (activation checkpointing)",
       one_of({"0", "1"})},
      {"attention", models::default_attention_kernel(), models::attention_param_help(),
       [](const std::string& v) { (void)models::attention_kernel_from(v); }, /*kernel_choice=*/true},
  };
  w.check_together = [](const Params& p) { (void)llama_config_of(p); };
  w.depth = [](const Params& p) { return llama_config_of(p).layers; };
  return w;
}

}  // namespace trainbench
