// The decoder language models' shapes from a case's parameters (gpt, llama): one rule each, read by
// their descriptions (cases/) and by what builds them (workloads/gpt.cpp, llama.cpp).
#pragma once
#include <cstdint>
#include <string>

#include "cases/llama_config.h"
#include "cases/workload_info.h"

namespace trainbench {

namespace models {
// GPT-2's published sizes: {layers, hidden} (heads = hidden / 64). Throws std::invalid_argument for
// another name.
struct GptSize {
  int64_t layers, hidden;
};
GptSize gpt_size(const std::string& name);  // small | medium | large | xl
}  // namespace models

// A gpt case's shape: size gives layers and hidden unless they are given (non-zero); heads default to
// hidden / 64, as in every GPT-2 size. Every parameter given (defaults filled in).
struct GptShape {
  int64_t layers = 0, hidden = 0, heads = 0, vocab = 0, max_pos = 0;
  double dropout = 0.0;
};
GptShape gpt_shape_of(const Params& all);

// The llama size a case trains unless told.
inline constexpr const char* kDefaultLlamaSize = "llama-3.2-1b";

// A llama case's shape: the named size or the config file, then the overrides; checked by the one rule
// (models::check_llama_config), with the sequence against a sliding window. Throws
// std::invalid_argument (one line).
models::LlamaConfig llama_config_of(const Params& all);

}  // namespace trainbench
