#include "data/loader_bench.h"

#include <chrono>

namespace trainbench::data {

LoaderRun measure_loader(const std::function<std::shared_ptr<BatchSource>()>& make_source, int threads,
                         int64_t samples_per_epoch, int64_t batch, int epochs,
                         const std::function<void(size_t, const EpochFigures&)>& on_epoch) {
  using Clock = std::chrono::steady_clock;
  LoaderRun run;
  run.threads = threads;
  auto source = make_source();
  const auto start = Clock::now();  // the threads start with the loader: its first batch is timed
  Loader loader(source, threads);
  int64_t delivered = 0, delivered_before = 0;
  auto epoch_start = start;
  for (int e = 0; e < epochs; ++e) {
    // An epoch ends with the batch that completes its samples (batches may straddle epochs).
    const int64_t target = (e + 1) * samples_per_epoch;
    while (delivered < target) {
      (void)loader.next();
      delivered += batch;
    }
    const auto now = Clock::now();
    const LoaderStats s = loader.stats();
    EpochFigures f;
    f.wall_s = std::chrono::duration<double>(now - epoch_start).count();
    f.samples_s = static_cast<double>(delivered - delivered_before) / f.wall_s;
    // Bytes per sample over everything read so far: the loader reads ahead of the batches delivered.
    f.mb_s = s.samples > 0 ? f.samples_s * static_cast<double>(s.bytes) / static_cast<double>(s.samples) / 1e6 : 0.0;
    delivered_before = delivered;
    run.epochs.push_back(f);
    if (on_epoch) on_epoch(run.epochs.size() - 1, f);
    epoch_start = Clock::now();  // the caller's time is not the loader's
  }
  run.stats = loader.stats();
  if (run.stats.samples > 0) {
    const double n = static_cast<double>(run.stats.samples);
    run.read_s = run.stats.read_s / n;
    run.decode_s = run.stats.decode_s / n;
    run.augment_s = run.stats.augment_s / n;
    run.copy_s = run.stats.copy_s / n;
  }
  return run;
}

}  // namespace trainbench::data
