#include "data/loader.h"

#include <algorithm>
#include <chrono>

#include "core/counting_allocator.h"

namespace trainbench::data {

int default_loader_threads(bool gpu_case) {
  if (!gpu_case) return 1;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores - 1);
}

Loader::Loader(std::shared_ptr<BatchSource> source, int threads, int prefetch) : source_(std::move(source)) {
  threads = std::max(1, threads);
  capacity_ = static_cast<size_t>(prefetch > 0 ? prefetch : 2 * threads);
  workers_.reserve(threads);
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

Loader::~Loader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  space_.notify_all();
  for (auto& t : workers_) t.join();
}

void Loader::work() {
  using Clock = std::chrono::steady_clock;
  const memory::ScopedMemoryOwner loaders(memory::MemoryOwner::loader);
  while (true) {
    int64_t index = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      space_.wait(lock, [&] { return stop_ || error_ || queue_.size() + in_flight_ < capacity_; });
      if (stop_ || error_) return;
      index = next_index_++;
      ++in_flight_;
    }
    StageTimes t;
    Batch b;
    std::exception_ptr failed;
    const auto t0 = Clock::now();
    try {
      b = source_->make(index, t);
      b.index = index;
    } catch (...) {
      failed = std::current_exception();
    }
    const double busy = std::chrono::duration<double>(Clock::now() - t0).count();
    {
      std::lock_guard<std::mutex> lock(mu_);
      --in_flight_;
      busy_s_ += busy;
      totals_.read_s += t.read_s;
      totals_.decode_s += t.decode_s;
      totals_.augment_s += t.augment_s;
      totals_.copy_s += t.copy_s;
      totals_.bytes += t.bytes;
      totals_.samples += t.samples;
      if (failed) {
        if (!error_) error_ = failed;
      } else {
        queue_.push_back(std::move(b));
      }
    }
    ready_.notify_one();
    if (failed) {
      ready_.notify_all();
      space_.notify_all();
      return;
    }
  }
}

Batch Loader::next() {
  std::unique_lock<std::mutex> lock(mu_);
  // The wanted batch is made or in flight: the threads start batches in index order and the capacity
  // counts those in flight, so it always arrives unless its source threw.
  auto wanted = queue_.end();
  ready_.wait(lock, [&] {
    wanted = std::find_if(queue_.begin(), queue_.end(), [&](const Batch& b) { return b.index == next_deliver_; });
    return wanted != queue_.end() || error_;
  });
  if (wanted == queue_.end()) std::rethrow_exception(error_);
  Batch b = std::move(*wanted);
  queue_.erase(wanted);
  ++next_deliver_;
  lock.unlock();
  space_.notify_one();
  if (memory::CountingAllocator* counter = memory::counting_allocator()) {
    for (const torch::Tensor& t : b.tensors) {
      if (t.defined() && t.has_storage()) counter->hand_over_to_model(t.storage().data_ptr());
    }
  }
  return b;
}

void Loader::wait_full() {
  std::unique_lock<std::mutex> lock(mu_);
  ready_.wait(lock, [&] { return queue_.size() >= capacity_ || error_; });
}

LoaderStats Loader::stats() const {
  LoaderStats s = source_->describe();
  std::lock_guard<std::mutex> lock(mu_);
  s.threads = static_cast<int>(workers_.size());
  s.samples = totals_.samples;
  s.bytes = totals_.bytes;
  s.busy_thread_s = busy_s_;
  s.read_s = totals_.read_s;
  s.decode_s = totals_.decode_s;
  s.augment_s = totals_.augment_s;
  s.copy_s = totals_.copy_s;
  return s;
}

}  // namespace trainbench::data
