#include "models/checkpoint.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <mutex>

namespace trainbench::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// LibTorch 2.4 replaced the per-device autocast calls by calls that take the device type.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define TRAINBENCH_AUTOCAST_BY_DEVICE_TYPE 1
#endif

// The autocast settings of this thread (CPU and CUDA), captured at the first forward and put back for the
// recomputation, which runs inside backward where the step's autocast scope has already ended.
struct AutocastState {
  bool cpu = false, gpu = false;
  at::ScalarType cpu_dtype = at::kBFloat16, gpu_dtype = at::kHalf;

  static AutocastState current() {
    AutocastState s;
#ifdef TRAINBENCH_AUTOCAST_BY_DEVICE_TYPE
    s.cpu = at::autocast::is_autocast_enabled(at::kCPU);
    s.gpu = at::autocast::is_autocast_enabled(at::kCUDA);
    s.cpu_dtype = at::autocast::get_autocast_dtype(at::kCPU);
    s.gpu_dtype = at::autocast::get_autocast_dtype(at::kCUDA);
#else
    s.cpu = at::autocast::is_cpu_enabled();
    s.gpu = at::autocast::is_enabled();
    s.cpu_dtype = at::autocast::get_autocast_cpu_dtype();
    s.gpu_dtype = at::autocast::get_autocast_gpu_dtype();
#endif
    return s;
  }
  void apply() const {
#ifdef TRAINBENCH_AUTOCAST_BY_DEVICE_TYPE
    at::autocast::set_autocast_enabled(at::kCPU, cpu);
    at::autocast::set_autocast_enabled(at::kCUDA, gpu);
    at::autocast::set_autocast_dtype(at::kCPU, cpu_dtype);
    at::autocast::set_autocast_dtype(at::kCUDA, gpu_dtype);
#else
    at::autocast::set_cpu_enabled(cpu);
    at::autocast::set_enabled(gpu);
    at::autocast::set_autocast_cpu_dtype(cpu_dtype);
    at::autocast::set_autocast_gpu_dtype(gpu_dtype);
#endif
  }
};

// Holds what backward needs besides tensors; lives in the autograd context as a capsule.
struct SegmentState : torch::CustomClassHolder {
  Segment segment;
  AutocastState autocast;
  c10::Device device = c10::kCPU;
  torch::Tensor rng_state;  // the device's default generator before the first forward
};

struct CheckpointFunction : torch::autograd::Function<CheckpointFunction> {
  static torch::Tensor forward(AutogradContext* ctx, c10::intrusive_ptr<SegmentState> state, const torch::Tensor& x) {
    state->autocast = AutocastState::current();
    state->device = x.device();
    // Dropout in the segment: the recomputation must draw the same masks.
    {
      auto generator = at::globalContext().defaultGenerator(state->device);
      std::lock_guard<std::mutex> lock(generator.mutex());
      state->rng_state = generator.get_state();
    }
    ctx->saved_data["state"] = c10::IValue::make_capsule(state);
    ctx->save_for_backward({x});
    return state->segment(x);  // Function::apply runs this below autograd: nothing is saved
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto state = c10::static_intrusive_pointer_cast<SegmentState>(ctx->saved_data["state"].toCapsule());
    const bool needs_input_grad = ctx->get_saved_variables()[0].requires_grad();
    const torch::Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_(needs_input_grad);
    torch::Tensor y;
    {
      // Fork the generator: replay the first forward's draws, then leave the sequence where it was.
      auto generator = at::globalContext().defaultGenerator(state->device);
      torch::Tensor now;
      {
        std::lock_guard<std::mutex> lock(generator.mutex());
        now = generator.get_state();
        generator.set_state(state->rng_state);
      }
      const AutocastState outside = AutocastState::current();
      state->autocast.apply();
      at::autocast::increment_nesting();
      {
        torch::AutoGradMode grad(true);
        y = state->segment(x);
      }
      if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
      outside.apply();
      std::lock_guard<std::mutex> lock(generator.mutex());
      generator.set_state(now);
    }
    // Reentrant: accumulates into the segment's parameters' .grad, as torch.utils.checkpoint does.
    torch::autograd::backward({y}, {grad_outputs[0]});
    return {torch::Tensor(), needs_input_grad ? x.grad() : torch::Tensor()};
  }
};

}  // namespace

torch::Tensor checkpoint(const Segment& segment, const torch::Tensor& x) {
  if (!torch::GradMode::is_enabled()) return segment(x);
  auto state = c10::make_intrusive<SegmentState>();
  state->segment = segment;
  return CheckpointFunction::apply(state, x);
}

}  // namespace trainbench::models
