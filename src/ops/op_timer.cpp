#include "ops/op_timer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <new>

#include "core/precision.h"
#include "runner/measure.h"

namespace trainbench {
namespace {

using Clock = std::chrono::steady_clock;

// One layer built on the device: the tensors whose gradient is backward-data, the parameters whose
// gradient is backward-weights, and its forward.
struct OpInstance {
  std::vector<torch::Tensor> data;
  std::vector<torch::Tensor> weights;
  std::function<torch::Tensor()> forward;
  std::shared_ptr<torch::nn::Module> module;  // keeps a module-backed layer alive
};

OpInstance build(const OpDescriptor& d, const OpSettings& s) {
  const auto dtype = parse_precision(s.precision).dtype;
  const auto opts = torch::TensorOptions().device(s.device.torch_device()).dtype(dtype);
  const bool nhwc = s.layout == "nhwc";
  auto format = [&](torch::Tensor t) {
    return nhwc && t.dim() == 4 ? t.contiguous(at::MemoryFormat::ChannelsLast) : t;
  };
  OpInstance op;
  const auto& k = d.kind;
  if (k == "conv") {
    auto x = format(torch::randn({d.get("mb"), d.get("ic"), d.get("ih"), d.get("iw")}, opts));
    auto w = format(torch::randn({d.get("oc"), d.get("ic") / d.get("g"), d.get("kh"), d.get("kw")}, opts) * 0.05);
    const std::vector<int64_t> stride = {d.get("sh"), d.get("sw")}, pad = {d.get("ph"), d.get("pw")},
                               dil = {d.get("dh"), d.get("dw")};
    const int64_t g = d.get("g");
    op.data = {x};
    op.weights = {w};
    op.forward = [x, w, stride, pad, dil, g] { return torch::conv2d(x, w, {}, stride, pad, dil, g); };
  } else if (k == "gemm") {
    auto a = torch::randn({d.get("m"), d.get("k")}, opts);
    auto b = torch::randn({d.get("k"), d.get("n")}, opts);
    op.data = {a};
    op.weights = {b};
    op.forward = [a, b] { return torch::mm(a, b); };
  } else if (k == "linear") {
    auto x = torch::randn({d.get("m"), d.get("k")}, opts);
    auto w = torch::randn({d.get("n"), d.get("k")}, opts) * 0.05;
    auto b = torch::zeros({d.get("n")}, opts);
    op.data = {x};
    op.weights = {w, b};
    op.forward = [x, w, b] { return torch::nn::functional::linear(x, w, b); };
  } else if (k == "lstm") {
    auto lstm = std::make_shared<torch::nn::LSTMImpl>(torch::nn::LSTMOptions(d.get("i"), d.get("h"))
                                                          .num_layers(d.get("l"))
                                                          .bidirectional(d.get("d") == 2)
                                                          .batch_first(true));
    lstm->to(s.device.torch_device(), dtype);
    auto x = torch::randn({d.get("mb"), d.get("t"), d.get("i")}, opts);
    op.module = lstm;
    op.data = {x};
    op.weights = lstm->parameters();
    op.forward = [lstm, x] { return std::get<0>(lstm->forward(x)); };
  } else if (k == "attention") {
    const std::vector<int64_t> shape = {d.get("mb"), d.get("nh"), d.get("s"), d.get("hd")};
    auto q = torch::randn(shape, opts), kk = torch::randn(shape, opts), v = torch::randn(shape, opts);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d.get("hd")));
    op.data = {q, kk, v};
    op.forward = [q, kk, v, scale] { return torch::matmul(torch::softmax(torch::matmul(q, kk.transpose(-2, -1)) * scale, -1), v); };
  } else if (k == "bn") {
    auto bn = std::make_shared<torch::nn::BatchNorm2dImpl>(d.get("ic"));
    bn->to(s.device.torch_device(), dtype);
    bn->train();
    auto x = format(torch::randn({d.get("mb"), d.get("ic"), d.get("ih"), d.get("iw")}, opts));
    op.module = bn;
    op.data = {x};
    op.weights = {bn->weight, bn->bias};
    op.forward = [bn, x] { return bn->forward(x); };
  } else {
    throw std::invalid_argument("no timer for op kind '" + k + "'");
  }
  return op;
}

void require_grad(std::vector<torch::Tensor>& ts, bool on) {
  for (auto& t : ts) {
    t.requires_grad_(on);
    t.mutable_grad() = torch::Tensor();
  }
}

void drop_grads(std::vector<torch::Tensor>& ts) {
  for (auto& t : ts) t.mutable_grad() = torch::Tensor();
}

OpPhaseRecord time_phase(OpInstance& op, const OpDescriptor& d, OpPhase phase, const OpSettings& s) {
  const bool backward = phase != OpPhase::fwd;
  // Gradients only where this phase computes them, so autograd runs exactly that half of backward.
  require_grad(op.data, phase == OpPhase::bwd_data || (phase == OpPhase::fwd && s.input_grad));
  require_grad(op.weights, phase != OpPhase::bwd_data);
  torch::Tensor grad_out;
  auto one = [&]() -> double {
    if (!backward) {
      const auto t0 = Clock::now();
      auto y = op.forward();
      synchronize(s.device);
      return std::chrono::duration<double>(Clock::now() - t0).count();
    }
    auto y = op.forward();
    if (!grad_out.defined()) grad_out = torch::randn_like(y);
    synchronize(s.device);
    const auto t0 = Clock::now();
    y.backward(grad_out);
    synchronize(s.device);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    drop_grads(op.data);
    drop_grads(op.weights);
    return dt;
  };
  Sampled sampled = sample_until_done(s.measure, one);
  OpPhaseRecord p;
  p.phase = to_string(phase);
  p.samples_s = std::move(sampled.samples);
  p.time_s = summarize(p.samples_s);
  p.stop_reason = sampled.stop_reason;
  p.flops = d.flops(phase);
  p.achieved_gflops = p.flops > 0.0 ? p.flops / p.time_s.median / 1e9 : 0.0;
  return p;
}

}  // namespace

MeasureSettings default_op_measure() {
  MeasureSettings m;
  m.warmup_steps = 2;
  m.min_steps = 5;
  m.min_time_s = 0.2;
  m.max_time_s = 5.0;
  m.max_noise = 0.02;
  return m;
}

OpRecord time_op(const OpDescriptor& d, const OpSettings& s) {
  OpRecord r;
  r.name = d.str();
  r.kind = d.kind;
  r.label = d.label();
  r.device = s.device.str();
  r.precision = s.precision;
  r.layout = s.layout;
  r.threads = at::get_num_threads();
  try {
    torch::manual_seed(0);
    OpInstance op = build(d, s);
    for (OpPhase phase : all_phases()) {
      if (phase == OpPhase::bwd_data && !s.input_grad) continue;
      if (phase == OpPhase::bwd_weights && op.weights.empty()) continue;
      r.phases.push_back(time_phase(op, d, phase, s));
    }
    r.status = Status::ok;
  } catch (...) {
    set_failure(r, current_failure());
  }
  if (!r.ok()) r.phases.clear();
  return r;
}

}  // namespace trainbench
