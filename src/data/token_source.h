// Batches of token windows from a TokenFile: each sample is a window at a random offset (a fixed seed),
// cut by the loader's threads. What a workload trains on is the source's Target:
//   next_token  {ids (B, seq), targets (B, seq)}: a window of seq + 1, targets shifted by one (a decoder LM)
//   masked_lm   {ids (B, seq), labels (B, seq)}: BERT's masking in the loader, as Hugging Face's
//               DataCollatorForLanguageModeling: each position chosen with probability 0.15; a chosen one
//               becomes [MASK] 80% of the time, a random id 10%, stays 10%; labels hold the original id at
//               chosen positions and -100 elsewhere
//   classify    {ids (B, seq), labels (B)}: a class per window derived from its first token (id % classes),
//               so the label is a function of the data and the same window always has the same label
#pragma once
#include <torch/torch.h>

#include <memory>

#include "data/loader.h"
#include "data/token_file.h"

namespace trainbench::data {

enum class TokenTarget { next_token, masked_lm, classify };

struct TokenSourceOptions {
  int64_t batch = 1;
  int64_t seq = 128;
  TokenTarget target = TokenTarget::next_token;
  int64_t vocab = 0;     // random replacement ids are drawn below it (masked_lm)
  int64_t mask_id = -1;  // masked_lm's [MASK]; -1: bert-base-uncased's 103 when the vocabulary has it, else vocab - 1
  int64_t classes = 2;   // classify
  uint64_t seed = 0;
};

constexpr int64_t kIgnoreLabel = -100;  // positions the masked-LM loss skips (Hugging Face's label)

class TokenWindowSource final : public BatchSource {
 public:
  // Throws DataError when the file holds fewer tokens than one window.
  TokenWindowSource(std::shared_ptr<const TokenFile> file, TokenSourceOptions options);
  Batch make(int64_t index, StageTimes& times) override;  // items: each window's offset
  LoaderStats describe() const override;
  int64_t mask_id() const { return mask_id_; }

 private:
  std::shared_ptr<const TokenFile> file_;
  TokenSourceOptions options_;
  int64_t mask_id_ = 0;
};

// Maps the token file `path` of `dtype`, refuses an id >= options.vocab (DataError naming the file, the
// offset and the value), and returns the source: what a workload's --data needs in one call.
std::shared_ptr<TokenWindowSource> open_token_source(const std::string& path, const std::string& dtype,
                                                     const TokenSourceOptions& options);

}  // namespace trainbench::data
