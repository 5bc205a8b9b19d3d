#include "models/bilstm.h"

namespace trainbench::models {

BiLSTMImpl::BiLSTMImpl(const BiLSTMOptions& o) : options(o) {
  embedding = register_module("embedding", torch::nn::Embedding(o.vocab(), o.embed()));
  lstm = register_module(
      "lstm",
      torch::nn::LSTM(
          torch::nn::LSTMOptions(o.embed(), o.hidden()).num_layers(o.layers()).bidirectional(true).batch_first(true)));
  classifier = register_module("classifier", torch::nn::Linear(2 * o.hidden(), o.classes()));
}

torch::Tensor BiLSTMImpl::forward(torch::Tensor tokens) {
  auto out = std::get<0>(lstm->forward(embedding->forward(tokens)));  // [N, T, 2*hidden]
  return classifier->forward(out.mean(1));
}

double bilstm_forward_flops(const BiLSTMOptions& o, int64_t batch, int64_t seq) {
  const double h = static_cast<double>(o.hidden());
  double per_step = 0.0;  // one time step of one sequence, both directions, every layer
  for (int64_t layer = 0; layer < o.layers(); ++layer) {
    const double input = layer == 0 ? static_cast<double>(o.embed()) : 2.0 * h;
    per_step += 2.0 /*directions*/ * 2.0 * 4.0 * h * (input + h);
  }
  const double head = 2.0 * 2.0 * h * static_cast<double>(o.classes());
  return static_cast<double>(batch) * (static_cast<double>(seq) * per_step + head);
}

}  // namespace trainbench::models

namespace trainbench::models {

StepFlops bilstm_step_flops(const BiLSTMOptions& options, int64_t batch, int64_t seq) {
  const double f = bilstm_forward_flops(options, batch, seq);
  return {f, f, f};
}

}  // namespace trainbench::models
