// The loader: N threads make batches ahead of the training step and hand them over through a bounded
// queue, in the order they were asked for, as PyTorch's DataLoader workers with a prefetch factor do
// (its default in_order=True): a batch that is ready before an earlier one waits for it, so the model
// sees the same batches in the same order whatever the number of threads. A BatchSource says how to make
// batch i (an ImageFolder of JPEGs, a token file, a test's slow fake); the loader owns threads and queue.
#pragma once
#include <torch/torch.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "data/loader_stats.h"

namespace trainbench::data {

struct Batch {
  int64_t index = 0;                   // 0, 1, 2, ... in the order they were asked for and delivered
  std::vector<torch::Tensor> tensors;  // e.g. {images, labels} or {token ids, targets}
  std::vector<int64_t> items;          // the samples it holds (file indices, token offsets)
};

// Stage times and volume one thread adds while making a batch (see LoaderStats).
struct StageTimes {
  double read_s = 0, decode_s = 0, augment_s = 0, copy_s = 0;
  int64_t bytes = 0, samples = 0;
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // Makes batch `index`. Called by several loader threads at once, each with its own index; adds its
  // stage times to `times`. Throws when no batch can be made (the consumer's next() rethrows it).
  virtual Batch make(int64_t index, StageTimes& times) = 0;
  // The source's part of the stats: kind, source, files, skipped files. Thread-safe.
  virtual LoaderStats describe() const = 0;
};

// The default --loader-threads: on a GPU case the host cores are otherwise idle but for the thread
// that drives the device, so all cores but one; on a CPU case the model's intra-op threads already use
// every core, so one loader thread (PyTorch's DataLoader(num_workers=1)): more would only take cores
// from the model. A sweep over --loader-threads shows the better choice for a given case.
int default_loader_threads(bool gpu_case);

class Loader {
 public:
  // `prefetch` batches at most are made or waiting at any time (0: two per thread, DataLoader's
  // prefetch_factor default).
  Loader(std::shared_ptr<BatchSource> source, int threads, int prefetch = 0);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // The next batch in index order; blocks until it is ready. Rethrows the error a source threw (a
  // failed batch never arrives, so the batches after it are not handed over either). Its tensors,
  // counted as the loader's while they were made and queued (core/counting_allocator.h), become the
  // model's here.
  Batch next();
  // Blocks until the queue holds its full `prefetch` batches (or a source threw): the loader's memory
  // at its fullest, for LoaderRoom (core/address_space.h) to read.
  void wait_full();
  LoaderStats stats() const;
  int threads() const { return static_cast<int>(workers_.size()); }

 private:
  void work();

  std::shared_ptr<BatchSource> source_;
  size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<Batch> queue_;  // made batches, in the order they were finished
  size_t in_flight_ = 0;
  int64_t next_index_ = 0;    // the next batch a thread starts
  int64_t next_deliver_ = 0;  // the next batch next() hands over
  bool stop_ = false;
  std::exception_ptr error_;
  StageTimes totals_;
  double busy_s_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace trainbench::data
