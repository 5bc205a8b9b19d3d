#include "dist/grad_allreduce.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
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

int64_t GradientAllreducer::bucket_bytes() const {
  int64_t bytes = 0;
  for (const auto& b : buckets_) bytes += static_cast<int64_t>(b.flat.nbytes());
  return bytes;
}

GradientAllreducer::GradientAllreducer(CommPtr comm, std::vector<torch::Tensor> params, int64_t bucket_bytes)
    : comm_(std::move(comm)), params_(std::move(params)), slot_(params_.size()), arrived_(params_.size(), 0) {
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
    if (!current.empty() &&
        (current_bytes + bytes > bucket_bytes || params_[current.front()].scalar_type() != p.scalar_type() ||
         params_[current.front()].device() != p.device())) {
      close();
    }
    current.push_back(k);
    current_bytes += bytes;
  }
  close();
  launched_at_.resize(buckets_.size());
  completed_at_.resize(buckets_.size());
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
      } catch (...) {}
    }
  }
  wait_for_callbacks(std::chrono::seconds(10));  // they hold `this`
}

bool GradientAllreducer::wait_for_callbacks(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(timing_mutex_);
  return timing_cv_.wait_for(lock, timeout, [this] { return completed_ == launched_; });
}

void GradientAllreducer::before_backward() {
  {
    std::lock_guard<std::mutex> timing(timing_mutex_);
    launched_ = completed_ = 0;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
  }
  std::fill(arrived_.begin(), arrived_.end(), 0);
  next_launch_ = 0;
}

void GradientAllreducer::on_gradient(size_t param, const torch::Tensor& grad) {
  if (!grad.defined()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (arrived_[param]) return;  // a leaf's hook fires once per backward; never count one twice
  arrived_[param] = 1;
  const auto [bucket, index] = slot_[param];
  Bucket& b = buckets_[bucket];
  b.views[index].copy_(grad);
  if (--b.pending == 0) launch_ready_locked();
}

void GradientAllreducer::launch_ready_locked() {
  const double scale = 1.0 / static_cast<double>(comm_->getSize());
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    const size_t index = next_launch_++;
    Bucket& b = buckets_[index];
    b.flat.mul_(scale);  // sum of gradients / world size = their mean
    std::vector<torch::Tensor> one = {b.flat};
    {
      std::lock_guard<std::mutex> timing(timing_mutex_);
      launched_at_[index] = Clock::now();
      ++launched_;
    }
    b.work = comm_->allreduce(one);
    b.work->getFuture()->addCallback([this, index](c10::ivalue::Future&) {
      std::lock_guard<std::mutex> timing(timing_mutex_);
      completed_at_[index] = Clock::now();
      ++completed_;
      timing_cv_.notify_all();
    });
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
        if (!arrived_[b.params[k]]) b.views[k].zero_();  // else last step's values would be sent
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

  // Communication time: the union of the all-reduces' [launch, completion] intervals.
  last_comm_s_ = std::numeric_limits<double>::quiet_NaN();
  if (!wait_for_callbacks(std::chrono::seconds(5))) return;
  std::vector<std::pair<Clock::time_point, Clock::time_point>> spans;
  for (size_t i = 0; i < buckets_.size(); ++i) spans.emplace_back(launched_at_[i], completed_at_[i]);
  std::sort(spans.begin(), spans.end());
  double total = 0.0;
  Clock::time_point covered = spans.empty() ? Clock::time_point{} : spans.front().first;
  for (const auto& [from, to] : spans) {
    const auto begin = std::max(from, covered);
    if (to > begin) {
      total += std::chrono::duration<double>(to - begin).count();
      covered = to;
    }
  }
  last_comm_s_ = total;
}

}  // namespace trainbench::dist
