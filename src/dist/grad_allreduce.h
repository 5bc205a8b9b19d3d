// Gradient averaging as DistributedDataParallel does it: parameters grouped into buckets of at most
// `bucket_bytes` (in reverse order, since backward produces the last layers' gradients first); a hook
// on each parameter copies its gradient into its bucket as autograd computes it, and a full bucket is
// all-reduced at once, asynchronously, while backward goes on. After backward, what is left is waited
// for (the *exposed* communication) and the averages are copied into every .grad.
#pragma once
#include <torch/torch.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "dist/process_group.h"
#include "workloads/workload.h"

namespace trainbench::dist {

// Copies rank 0's values of `tensors` (parameters and buffers) into every rank's, one broadcast per
// dtype (flattened), so all replicas start identical.
void broadcast_from_rank0(Comm& comm, const std::vector<torch::Tensor>& tensors);

class GradientAllreducer final : public GradientSync {
 public:
  // `params`: the trainable parameters, the same list in the same order on every rank.
  GradientAllreducer(CommPtr comm, std::vector<torch::Tensor> params, int64_t bucket_bytes);
  ~GradientAllreducer() override;
  GradientAllreducer(const GradientAllreducer&) = delete;
  GradientAllreducer& operator=(const GradientAllreducer&) = delete;

  void before_backward() override;
  void after_backward() override;

  size_t bucket_count() const { return buckets_.size(); }
  // Bytes of the buckets' storage: every gradient once more, flattened (the memory breakdown's
  // comm_buffer_bytes).
  int64_t bucket_bytes() const;
  // Seconds the last after_backward took: waiting for all-reduces still running, and the copy back.
  double last_exposed_s() const { return last_exposed_s_; }
  // Seconds of the last step during which at least one all-reduce was in flight (launch to completion,
  // hidden behind backward or not); NaN if a completion time went missing.
  double last_comm_s() const { return last_comm_s_; }

 private:
  struct Bucket {
    torch::Tensor flat;                // the gradients of its parameters, back to back
    std::vector<size_t> params;        // indices into params_
    std::vector<torch::Tensor> views;  // views of `flat`, shaped like each parameter
    size_t pending = 0;                // gradients not arrived yet this step
    c10::intrusive_ptr<c10d::Work> work;
  };

  void on_gradient(size_t param, const torch::Tensor& grad);
  // Launches ready buckets strictly in bucket order, so every rank issues the same collectives in
  // the same sequence whatever order its hooks fire in.
  void launch_ready_locked();
  // Waits until every launched all-reduce's completion callback has run (they run on the backend's
  // threads and write into this object).
  bool wait_for_callbacks(std::chrono::milliseconds timeout);

  CommPtr comm_;
  std::vector<torch::Tensor> params_;
  std::vector<std::pair<size_t, size_t>> slot_;  // param -> (bucket, index in bucket)
  std::vector<char> arrived_;                    // param -> its gradient arrived this step
  std::vector<Bucket> buckets_;
  std::vector<unsigned> hook_ids_;
  size_t next_launch_ = 0;
  std::mutex mutex_;
  double last_exposed_s_ = 0.0;
  double last_comm_s_ = 0.0;
  // Completion times, written by callbacks: a mutex of their own, since a callback may run at once,
  // inside launch_ready_locked, when the work is already done.
  using Clock = std::chrono::steady_clock;
  std::mutex timing_mutex_;
  std::condition_variable timing_cv_;
  std::vector<Clock::time_point> launched_at_, completed_at_;
  size_t launched_ = 0, completed_ = 0;
};

}  // namespace trainbench::dist
