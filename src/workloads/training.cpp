#include "workloads/training.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include "core/address_space.h"
#include "core/flops.h"

#include <algorithm>
#include <stdexcept>

namespace trainbench {

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

at::ScalarType input_dtype(const Precision& p) { return p.pure ? torch_dtype(p) : at::kFloat; }

void check_precision(const WorkloadOptions& o) {
  // LibTorch's CPU autocast casts to bf16 only, and its CPU kernels (convolution, 1.13) lack fp16.
  if (o.precision.type == "fp16" && !o.device.is_gpu()) {
    throw std::invalid_argument("precision " + o.precision.str() +
                                " needs a GPU: LibTorch's CPU autocast and kernels support bf16, not fp16");
  }
}

void to_dtype(const std::vector<torch::Tensor>& tensors, at::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  for (const auto& t : tensors) {
    if (t.is_floating_point()) t.set_data(t.data().to(dtype));
  }
}

void to_dtype(torch::nn::Module& module, at::ScalarType dtype) {
  to_dtype(module.parameters(), dtype);
  to_dtype(module.buffers(), dtype);
}

// LibTorch 2.4 replaced the per-device autocast calls (is_enabled, set_cpu_enabled, ...) by calls that
// take the device type, and deprecated the old ones with a warning at run time.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define TRAINBENCH_AUTOCAST_BY_DEVICE_TYPE 1
#endif

AutocastScope::AutocastScope(const WorkloadOptions& o) : AutocastScope(o.precision, o.device) {}

AutocastScope::AutocastScope(const Precision& p, const DeviceSpec& device) {
  if (!p.autocast()) return;
  active_ = true;
  gpu_ = device.is_gpu();
  device_type_ = device_kind(device).torch_type;
#ifdef TRAINBENCH_AUTOCAST_BY_DEVICE_TYPE
  const at::DeviceType type = device_type_;
  prev_enabled_ = at::autocast::is_autocast_enabled(type);
  prev_dtype_ = at::autocast::get_autocast_dtype(type);
  at::autocast::set_autocast_enabled(type, true);
  at::autocast::set_autocast_dtype(type, torch_dtype(p));
#else
  if (gpu_) {
    prev_enabled_ = at::autocast::is_enabled();
    prev_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(torch_dtype(p));
  } else {
    prev_enabled_ = at::autocast::is_cpu_enabled();
    prev_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_cpu_enabled(true);
    at::autocast::set_autocast_cpu_dtype(torch_dtype(p));
  }
#endif
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#ifdef TRAINBENCH_AUTOCAST_BY_DEVICE_TYPE
  const at::DeviceType type = device_type_;
  at::autocast::set_autocast_enabled(type, prev_enabled_);
  at::autocast::set_autocast_dtype(type, prev_dtype_);
#else
  if (gpu_) {
    at::autocast::set_enabled(prev_enabled_);
    at::autocast::set_autocast_gpu_dtype(prev_dtype_);
  } else {
    at::autocast::set_cpu_enabled(prev_enabled_);
    at::autocast::set_autocast_cpu_dtype(prev_dtype_);
  }
#endif
}

void to_channels_last(const std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  for (const auto& t : tensors) {
    if (t.dim() == 4) t.set_data(t.data().contiguous(at::MemoryFormat::ChannelsLast));
  }
}

void to_channels_last(torch::nn::Module& module) {
  to_channels_last(module.parameters());
  to_channels_last(module.buffers());
}

LossWorkload::LossWorkload(const WorkloadOptions& options, std::string unit)
    : options_(options), precision_(options.precision), unit_(std::move(unit)) {
  check_precision(options_);
}

void LossWorkload::finish_setup(torch::nn::Module& model, const StepFlops& flops, int64_t parameters,
                                int64_t tokens_per_sample, const std::vector<torch::Tensor*>& float_inputs) {
  finish_setup(
      model.parameters(), model.buffers(), [&model](bool on) { model.train(on); }, flops, parameters, tokens_per_sample,
      float_inputs);
}

void LossWorkload::finish_setup(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& buffers,
                                const std::function<void(bool)>& set_training, const StepFlops& flops,
                                int64_t parameters, int64_t tokens_per_sample,
                                const std::vector<torch::Tensor*>& float_inputs) {
  if (precision_.pure) {
    const at::ScalarType dtype = torch_dtype(precision_);
    to_dtype(params, dtype);
    to_dtype(buffers, dtype);
    for (torch::Tensor* t : float_inputs) {
      if (t->is_floating_point()) *t = t->to(dtype);  // keeps the memory format (channels-last)
    }
  }
  parameters_ = parameters;
  tokens_per_sample_ = tokens_per_sample;
  step_flops_ = flops;
  if (options_.forward_only) step_flops_.backward_data = step_flops_.backward_weights = 0.0;
  params_ = params;
  buffers_ = buffers;
  if (options_.forward_only) {
    set_training(false);
  } else {
    set_training(true);
    optimizer_ = make_optimizer(options_.optimizer, params_);
    // Which precisions scale the loss, and why: core/precision.h (docs/methodology.md).
    if (precision_.loss_scaling) scaler_ = std::make_unique<LossScaler>();
  }
}

void LossWorkload::step() {
  untrained_batch_ = false;
  if (options_.forward_only) {
    torch::NoGradGuard no_grad;
    AutocastScope amp(precision_, options_.device);
    forward();
    return;
  }
  zero_grad(params_);
  torch::Tensor l;
  {
    AutocastScope amp(precision_, options_.device);
    torch::Tensor out = forward();
    // Pure precisions: the loss (a softmax over the classes or vocabulary) in fp32, as autocast does.
    if (precision_.pure) out = out.to(torch::kFloat);
    l = loss(out);
  }
  if (observer_) observer_(StepPhase::after_forward);
  // Data-parallel: gradients are averaged across ranks between backward and the optimizer step (with
  // fp16 loss scaling, the scaled ones, as DistributedDataParallel with GradScaler does).
  if (sync_ != nullptr) sync_->before_backward();
  if (scaler_) {
    scaler_->scale(l).backward();
    if (sync_ != nullptr) sync_->after_backward();
    if (observer_) observer_(StepPhase::after_backward);
    scaler_->step(*optimizer_, params_);
  } else {
    l.backward();
    if (sync_ != nullptr) sync_->after_backward();
    if (observer_) observer_(StepPhase::after_backward);
    optimizer_->step();
  }
  if (observer_) observer_(StepPhase::after_optimizer_step);
  last_ = l.detach();
}

void LossWorkload::seed_batch() const {
  if (options_.data_seed >= 0) torch::manual_seed(static_cast<uint64_t>(options_.data_seed));
}

void LossWorkload::start_loader(std::shared_ptr<data::BatchSource> source) {
  const int threads =
      options_.loader_threads > 0 ? options_.loader_threads : data::default_loader_threads(options_.device.is_gpu());
  if (options_.device.is_gpu()) {
    loader_ = std::make_unique<data::Loader>(std::move(source), threads);
  } else {
    // A CPU case: the loader's threads and queue get their own room above --memory-limit, measured
    // with the queue full once (core/address_space.h); only the loader allocates meanwhile.
    LoaderRoom room;
    loader_ = std::make_unique<data::Loader>(std::move(source), threads);
    loader_->wait_full();
    room.close();
  }
  feed_ = std::make_unique<data::DeviceFeed>(torch_device(options_.device), options_.data_transfer == "uint8",
                                             input_dtype(precision_));
  feed_->start(loader_->next());
  std::vector<torch::Tensor> first = feed_->finish(copy_wait_s_);
  take_batch(first);
  untrained_batch_ = true;
  copy_wait_s_ = 0.0;
}

void LossWorkload::next_batch() {
  if (!loader_) return;
  copy_wait_s_ = 0.0;
  // GPU: the batch after this one starts copying now, on the side stream, while this step computes.
  auto start_next = [&] {
    if (options_.device.is_gpu() && !feed_->pending()) feed_->start(loader_->next());
  };
  // The batch taken at setup (or by a next_batch() with no step since) is still to be trained on.
  if (untrained_batch_) {
    start_next();
    return;
  }
  if (!feed_->pending()) feed_->start(loader_->next());
  std::vector<torch::Tensor> t = feed_->finish(copy_wait_s_);
  take_batch(t);
  untrained_batch_ = true;
  start_next();
}

void LossWorkload::start_token_loader(data::TokenTarget target, int64_t seq, int64_t vocab, int64_t classes) {
  data::TokenSourceOptions so;
  so.batch = options_.batch;
  so.seq = seq;
  so.target = target;
  so.vocab = vocab;
  so.classes = classes;
  so.seed = static_cast<uint64_t>(std::max<int64_t>(0, options_.data_seed));
  start_loader(data::open_token_source(options_.data, options_.data_dtype, so));
}

std::optional<LoaderStats> LossWorkload::loader_stats() const {
  if (!loader_) return std::nullopt;
  return loader_->stats();
}

double LossWorkload::last_loss() const { return last_.defined() ? last_.item<double>() : 0.0; }

}  // namespace detail
}  // namespace trainbench
