// `trainbench data`: the loader alone, no model. For one thread count, batches are taken as fast as the
// loader makes them for a number of epochs; each epoch is timed on its own (the first reads files the
// page cache may not hold yet). Measures only: the CLI prints.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "data/loader.h"

namespace trainbench::data {

struct EpochFigures {
  double wall_s = 0.0;
  double samples_s = 0.0;  // samples delivered per second of wall time
  double mb_s = 0.0;       // file bytes read per second of wall time
};

struct LoaderRun {
  int threads = 0;
  std::vector<EpochFigures> epochs;
  LoaderStats stats;  // counters over the whole run: stage times, bytes, skipped files
  // Thread time per sample by stage, seconds (stats' stage times over its samples).
  double read_s = 0, decode_s = 0, augment_s = 0, copy_s = 0;
};

// Runs `epochs` epochs of `samples_per_epoch` samples through a loader of `threads` threads over the
// source `make_source()` builds. `on_epoch(index, figures)` hears of each epoch as it ends, so that a
// caller can show it before a later epoch fails.
LoaderRun measure_loader(const std::function<std::shared_ptr<BatchSource>()>& make_source, int threads,
                         int64_t samples_per_epoch, int64_t batch, int epochs,
                         const std::function<void(size_t, const EpochFigures&)>& on_epoch = {});

}  // namespace trainbench::data
