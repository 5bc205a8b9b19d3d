#include "dist/grad_allreduce.h"

#include <chrono>
#include <map>

namespace trainbench::dist {

void broadcast_from_rank0(Comm& comm, const std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  std::map<std::pair<at::ScalarType, std::string>, std::vector<torch::Tensor>> groups;
  for (const auto& t : tensors) {
    if (t.defined() && t.numel() > 0) groups[{t.scalar_type(), t.device().str()}].push_back(t);
  }
  for (auto& [key, group] : groups) {
    std::vector<torch::Tensor> flat_parts;
    for (const auto& t : group) flat_parts.push_back(t.reshape({-1}));
    std::vector<torch::Tensor> flat = {torch::cat(flat_parts)};
    comm.broadcast(flat)->wait();
    int64_t offset = 0;
    for (auto& t : group) {
      t.copy_(flat[0].narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
  }
}

GradientAllreducer::GradientAllreducer(CommPtr comm, std::vector<torch::Tensor> params, int64_t bucket_bytes)
    : comm_(std::move(comm)), params_(std::move(params)), slot_(params_.size()) {
  // Reverse order: the gradients of the last layers arrive first, so the first bucket fills first.
  std::vector<size_t> current;
  int64_t current_bytes = 0;
  auto close = [&] {
    if (current.empty()) return;
    Bucket b;
    int64_t numel = 0;
    for (size_t i : current) numel += params_[i].numel();
    const auto& first = params_[current.front()];
    b.flat = torch::zeros({numel}, first.options().requires_grad(false));
    int64_t offset = 0;
    for (size_t i : current) {
      slot_[i] = {buckets_.size(), b.params.size()};
      b.params.push_back(i);
      b.views.push_back(b.flat.narrow(0, offset, params_[i].numel()).view(params_[i].sizes()));
      offset += params_[i].numel();
    }
    buckets_.push_back(std::move(b));
    current.clear();
    current_bytes = 0;
  };
  for (size_t k = params_.size(); k-- > 0;) {
    const auto& p = params_[k];
    const int64_t bytes = p.numel() * static_cast<int64_t>(p.element_size());
    // One dtype and device per bucket: it is one tensor.
    if (!current.empty() && (current_bytes + bytes > bucket_bytes ||
                             params_[current.front()].scalar_type() != p.scalar_type() ||
                             params_[current.front()].device() != p.device())) {
      close();
    }
    current.push_back(k);
    current_bytes += bytes;
  }
  close();
  for (size_t i = 0; i < params_.size(); ++i) {
    // A hook on a leaf sees its gradient before it is accumulated into .grad, once per backward.
    hook_ids_.push_back(params_[i].register_hook([this, i](const torch::Tensor& grad) { on_gradient(i, grad); }));
  }
  before_backward();
}

GradientAllreducer::~GradientAllreducer() {
  for (size_t i = 0; i < params_.size(); ++i) {
    try {
      params_[i].remove_hook(hook_ids_[i]);
    } catch (...) {  // a destructor must not throw; the tensor outlives us only in a failed case
    }
  }
  for (auto& b : buckets_) {
    if (b.work) {
      try {
        b.work->wait();
      } catch (...) {
      }
    }
  }
}

void GradientAllreducer::before_backward() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
  }
  next_launch_ = 0;
}

void GradientAllreducer::on_gradient(size_t param, const torch::Tensor& grad) {
  if (!grad.defined()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto [bucket, index] = slot_[param];
  Bucket& b = buckets_[bucket];
  if (b.pending == 0) return;  // a second gradient for a parameter this step: ignore, already sent
  b.views[index].copy_(grad);
  if (--b.pending == 0) launch_ready_locked();
}

void GradientAllreducer::launch_ready_locked() {
  const double scale = 1.0 / static_cast<double>(comm_->getSize());
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    Bucket& b = buckets_[next_launch_++];
    b.flat.mul_(scale);  // sum of gradients / world size = their mean
    std::vector<torch::Tensor> one = {b.flat};
    b.work = comm_->allreduce(one);
  }
}

void GradientAllreducer::after_backward() {
  const auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Parameters that got no gradient (unused in this forward) count as zero, as DDP's find_unused
    // does, so that every bucket is reduced on every rank.
    for (auto& b : buckets_) {
      if (b.pending == 0) continue;
      for (size_t k = 0; k < b.params.size(); ++k) {
        if (!params_[b.params[k]].grad().defined()) b.views[k].zero_();
      }
      b.pending = 0;
    }
    launch_ready_locked();
  }
  torch::NoGradGuard no_grad;
  for (auto& b : buckets_) {
    b.work->wait();
    b.work.reset();
    for (size_t k = 0; k < b.params.size(); ++k) {
      auto& p = params_[b.params[k]];
      if (p.grad().defined()) {
        p.mutable_grad().copy_(b.views[k]);
      } else {
        p.mutable_grad() = b.views[k].clone();
      }
    }
  }
  last_exposed_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace trainbench::dist
