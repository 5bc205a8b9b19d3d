#include "workloads/training.h"

#include <ATen/autocast_mode.h>

#include "core/flops.h"

#include <stdexcept>

namespace trainbench {

const std::vector<std::string>& known_precisions() {
  static const std::vector<std::string> v = {"fp32", "fp16", "bf16"};
  return v;
}
const std::vector<std::string>& known_layouts() {
  static const std::vector<std::string> v = {"nchw", "nhwc"};
  return v;
}
const std::vector<std::string>& known_optimizers() {
  static const std::vector<std::string> v = {"sgd", "momentum", "adam", "adamw"};
  return v;
}

namespace detail {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::string& name, std::vector<torch::Tensor> params) {
  // Learning rates small enough that synthetic data keeps the loss finite for thousands of steps.
  if (name == "sgd") return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.01));
  if (name == "momentum") {
    return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.01).momentum(0.9));
  }
  if (name == "adam") return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(1e-4));
  if (name == "adamw") {
    return std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(1e-4).weight_decay(0.01));
  }
  throw std::invalid_argument("unknown optimizer '" + name + "'");
}

void zero_grad(const std::vector<torch::Tensor>& params) {
  for (const auto& p : params) {
    if (p.grad().defined()) p.mutable_grad().reset();
  }
}

namespace {
at::ScalarType dtype_of(const std::string& precision) {
  return precision == "fp16" ? at::kHalf : at::kBFloat16;
}
}  // namespace

void check_precision(const WorkloadOptions& o) {
  if (o.precision == "fp16" && !o.device.is_gpu()) {
    throw std::invalid_argument("precision fp16 needs a GPU: LibTorch's CPU autocast supports bf16 only");
  }
}

AutocastScope::AutocastScope(const WorkloadOptions& o) {
  if (o.precision == "fp32") return;
  active_ = true;
  gpu_ = o.device.is_gpu();
  if (gpu_) {
    prev_enabled_ = at::autocast::is_enabled();
    prev_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(dtype_of(o.precision));
  } else {
    prev_enabled_ = at::autocast::is_cpu_enabled();
    prev_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_cpu_enabled(true);
    at::autocast::set_autocast_cpu_dtype(dtype_of(o.precision));
  }
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  if (gpu_) {
    at::autocast::set_enabled(prev_enabled_);
    at::autocast::set_autocast_gpu_dtype(prev_dtype_);
  } else {
    at::autocast::set_cpu_enabled(prev_enabled_);
    at::autocast::set_autocast_cpu_dtype(prev_dtype_);
  }
}

void to_channels_last(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    if (p.dim() == 4) p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
  }
  for (auto& b : module.buffers()) {
    if (b.dim() == 4) b.set_data(b.data().contiguous(at::MemoryFormat::ChannelsLast));
  }
}

LossWorkload::LossWorkload(const WorkloadOptions& options, std::string unit)
    : options_(options), unit_(std::move(unit)) {
  check_precision(options_);
}

void LossWorkload::finish_setup(torch::nn::Module& model, double forward_flops, int64_t parameters,
                                int64_t tokens_per_sample) {
  parameters_ = parameters;
  tokens_per_sample_ = tokens_per_sample;
  flops_ = options_.forward_only ? forward_flops : training_flops(forward_flops);
  params_ = model.parameters();
  buffers_ = model.buffers();
  if (options_.forward_only) {
    model.eval();
  } else {
    model.train();
    optimizer_ = make_optimizer(options_.optimizer, params_);
  }
}

void LossWorkload::step() {
  if (options_.forward_only) {
    torch::NoGradGuard no_grad;
    AutocastScope amp(options_);
    forward();
    return;
  }
  zero_grad(params_);
  torch::Tensor l;
  {
    AutocastScope amp(options_);
    l = loss(forward());
  }
  if (sync_ != nullptr) sync_->before_backward();
  l.backward();
  if (sync_ != nullptr) sync_->after_backward();
  optimizer_->step();
  last_ = l.detach();
}

void LossWorkload::seed_batch() const {
  if (options_.data_seed >= 0) torch::manual_seed(static_cast<uint64_t>(options_.data_seed));
}

double LossWorkload::last_loss() const { return last_.defined() ? last_.item<double>() : 0.0; }

}  // namespace detail
}  // namespace trainbench
