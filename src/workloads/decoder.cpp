#include "workloads/decoder.h"

#include "core/flops.h"
#include "data/token_source.h"
#include "models/attention.h"

namespace trainbench::detail {

void DecoderLmWorkload::first_batch(int64_t seq, int64_t vocab) {
  if (options_.synthetic_data()) {
    const auto tokens = torch::randint(0, vocab, {options_.batch, seq + 1},
                                       torch::TensorOptions(torch::kLong).device(torch_device(options_.device)));
    input_ = tokens.narrow(1, 0, seq).contiguous();
    targets_ = tokens.narrow(1, 1, seq).reshape({-1});
  } else {
    start_token_loader(data::TokenTarget::next_token, seq, vocab);
  }
}

StepFlops DecoderLmWorkload::count_batch_flops(
    const std::function<torch::Tensor(const torch::Tensor&)>& forward) const {
  torch::AutoGradMode grad(true);
  models::MathAttentionScope math;
  const auto x = input_.narrow(0, 0, 1);
  return count_step_flops([&] { forward(x); }).scaled(static_cast<double>(options_.batch));
}

void DecoderLmWorkload::set_model_flops(int64_t seq, const FormulaShape& s, bool checkpoint) {
  const double tokens = static_cast<double>(options_.batch * seq);
  const double attention = s.layers * s.attention_width * static_cast<double>(seq);
  const double forward_per_token = 2.0 * s.n + 4.0 * attention;
  model_flops_ = tokens * (options_.forward_only ? forward_per_token : 3.0 * forward_per_token);
  hardware_flops_ = 0.0;
  if (checkpoint && !options_.forward_only) {
    hardware_flops_ = model_flops_ + tokens * (2.0 * s.block_parameters + 4.0 * attention);
  }
}

void DecoderLmWorkload::take_batch(std::vector<torch::Tensor>& t) {
  input_ = t[0];
  targets_ = t[1].reshape({-1});
}

torch::Tensor DecoderLmWorkload::loss(const torch::Tensor& logits) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets_);
}

}  // namespace trainbench::detail
