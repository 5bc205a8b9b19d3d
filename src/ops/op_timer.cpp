#include "ops/op_timer.h"

#include <torch/torch.h>

#include <chrono>
#include <new>

#include "core/precision.h"
#include "ops/op_kind.h"
#include "runner/measure.h"

namespace trainbench {
namespace {

using Clock = std::chrono::steady_clock;

// The kind's builder, on the case's device, in its precision's dtype and its layout.
OpInstance build(const OpDescriptor& d, const OpSettings& s) {
  OpBuildSettings b;
  b.dtype = torch_dtype(s.precision);
  b.device = torch_device(s.device);
  const OpKind* kind = find_op_kind(d.kind);
  if (kind == nullptr) throw std::invalid_argument("no timer for op kind '" + d.kind + "'");
  b.channels_last = s.layout == Layout::nhwc;
  return kind->build(d, b);
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
  r.precision = s.precision.str();
  r.layout = to_string(s.layout);
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
