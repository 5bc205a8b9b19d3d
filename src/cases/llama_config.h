// The shape of a Llama-architecture decoder (Llama 2/3, Mistral, Qwen 2), as Hugging Face's LlamaConfig,
// MistralConfig and Qwen2Config describe it: its named sizes, and any config.json of those three
// architectures read strictly. Torch-free: the workload checks a config before any tensor is made.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::models {

// rope_scaling: none ("default"), linear (every frequency / factor) or Llama 3.1's (low frequencies / factor,
// high ones kept, a smooth blend between; Hugging Face's _compute_llama3_parameters).
enum class RopeScaling { none, linear, llama3 };

struct LlamaConfig {
  std::string model_type = "llama";  // llama | mistral | qwen2 (what a config.json named)
  int64_t vocab = 0;
  int64_t hidden = 0;
  int64_t intermediate = 0;  // the SwiGLU MLP's inner width
  int64_t layers = 0;
  int64_t heads = 0;     // query heads
  int64_t kv_heads = 0;  // key/value heads (grouped-query attention): divides heads
  int64_t head_dim = 0;  // even (RoPE rotates pairs); hidden / heads unless a config names another
  double rope_theta = 10000.0;
  RopeScaling rope_scaling = RopeScaling::none;
  double rope_factor = 1.0;              // linear and llama3
  double rope_low_freq_factor = 1.0;     // llama3
  double rope_high_freq_factor = 4.0;    // llama3
  int64_t rope_original_max_pos = 8192;  // llama3: original_max_position_embeddings
  double rms_norm_eps = 1e-6;
  bool tie_embeddings = false;  // the LM head is the token embedding
  bool qkv_bias = false;        // Qwen 2: q, k and v projections with bias; Llama's attention_bias: all four
  bool o_bias = false;
  bool mlp_bias = false;       // Llama's mlp_bias
  int64_t max_pos = 2048;      // max_position_embeddings: recorded, not a limit (RoPE has no table)
  int64_t sliding_window = 0;  // Mistral v0.1's window; 0: none. A sequence longer than it is refused
  double attention_dropout = 0.0;
  std::string source;  // the named size or the config.json path it came from
};

// The named sizes, each from its Hugging Face config.json (see llama_config.cpp): llama-3.2-1b,
// llama-3.2-3b, llama-3.1-8b, mistral-7b, qwen2.5-0.5b, qwen2.5-7b, smollm2-135m, and llama-tiny (a test
// size, not a published model).
const std::vector<std::string>& llama_size_names();
// Throws std::invalid_argument for another name, listing the names.
LlamaConfig llama_size(const std::string& name);

// Reads a config.json of model_type llama, mistral or qwen2. Throws std::invalid_argument with one line
// "config.json PATH: field 'F' ...": not JSON, another architecture, a needed field missing, a size that
// is not an integer or out of range, heads that do not divide, a field this model does not implement
// (mixture of experts, sliding windows in use, another rope scaling, another activation), or a field it
// does not know.
LlamaConfig read_llama_config(const std::string& path);
// The same from the text of a config (for tests); `path` names it in messages.
LlamaConfig parse_llama_config(const std::string& text, const std::string& path);

// Checks the shape (sizes in range, heads divisible, head_dim even); throws std::invalid_argument naming
// the field. read_llama_config and llama_size results pass it; the workload runs it after overrides.
void check_llama_config(const LlamaConfig& c, const std::string& where);

}  // namespace trainbench::models
