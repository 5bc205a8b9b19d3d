// Parameter and FLOP counts of a workload for `trainbench list`, kept in a small cache file so that
// listing does not build and run every model each time. Each count is still derived from the layer
// shapes (the workload built at batch 1, core/flops.h); the cache only remembers the result per
// LibTorch version, trainbench binary and workload parameters, and is recounted when any of those
// changes.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "workloads/registry.h"

namespace trainbench {

struct ModelCounts {
  int64_t parameters = 0;
  double forward_flops = 0.0;   // one sample
  double training_flops = 0.0;  // one sample: forward + backward-data + backward-weights
};

// The counts of workload `w` with parameters `params` (defaults filled in), the workload built whole at
// batch 1 on the CPU (training: its step FLOPs have all three parts).
ModelCounts count_whole(const WorkloadInfo& w, const Params& params);
// The counts of workload `w` with parameters `params` (defaults filled in): the workload built at batch 1
// on the CPU, or, for one of more than two blocks alike (WorkloadInfo::depth), built at one block and at
// two and extrapolated by count_by_depth: a block's parameters and FLOPs do not depend on the depth, and
// a 1B-parameter decoder at seq 2048 is counted in a few GB instead of the 23 GB its whole forward's
// autograd graph takes. Throws what make_workload throws.
ModelCounts count_model(const WorkloadInfo& w, const Params& params);
// one + (depth - 1) x (two - one), each count: the first block (which may differ, as a biLSTM's first
// layer reads the embedding) is in `one`, every later one costs what the second added.
ModelCounts count_by_depth(const ModelCounts& one, const ModelCounts& two, int64_t depth);

// $TRAINBENCH_CACHE_DIR, else $XDG_CACHE_HOME/trainbench, else ~/.cache/trainbench; empty when none
// of them is set (then nothing is cached).
std::filesystem::path counts_cache_dir();

class CountsCache {
 public:
  // Reads <dir>/counts.json if it is there and was written by this binary with this LibTorch; an
  // empty `dir` caches nothing.
  explicit CountsCache(std::filesystem::path dir);
  // The counts of workload `w` with parameters `params` (defaults filled in), from the cache or by
  // count_model. Throws what make_workload throws.
  ModelCounts get(const WorkloadInfo& w, const Params& params);
  // Writes the cache back (temp file + rename) if a count was added; errors are ignored (a cache).
  void save() const;

 private:
  std::filesystem::path dir_;
  std::string stamp_;  // LibTorch version and binary identity the entries belong to
  struct Entry {
    std::string key;
    ModelCounts counts;
  };
  std::vector<Entry> entries_;
  bool dirty_ = false;
};

}  // namespace trainbench
