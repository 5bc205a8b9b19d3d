// The all-reduce micro-benchmark: `allreduce:SIZE`, SIZE in fp32 elements (DeepBench's convention),
// bandwidth as nccl-tests reports it. Every rank of a process group calls benchmark_allreduce with the
// same arguments; the numbers are the slowest rank's.
//   algbw = bytes / time           busbw = algbw x 2(n-1)/n
// busbw is the traffic each link carries in a ring all-reduce, comparable across world sizes and with
// the hardware's link bandwidth.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/statistics.h"
#include "core/stopping.h"
#include "dist/process_group.h"

namespace trainbench::dist {

struct AllreduceCase {
  int64_t floats = 0;  // fp32 elements all-reduced
  // allreduce:100K, allreduce:64.5M, allreduce:3097600 — the shortest exact form: an M suffix (10^6,
  // at most one decimal) or K (10^3) where exact, else the plain count. parse(print()) is the identity
  // and print(parse(s)) == s for every s in that form.
  std::string descriptor() const;
};

// Parses "allreduce:SIZE" with SIZE a count, or with a K or M suffix (64.5M). Throws
// DescriptorError quoting the input and pointing at the bad part.
AllreduceCase parse_allreduce(const std::string& descriptor);

// DeepBench's all-reduce sizes, in floats: 100 000 ... 64 500 000.
const std::vector<int64_t>& deepbench_allreduce_sizes();

struct AllreduceResult {
  int64_t floats = 0;
  int64_t bytes = 0;
  int world_size = 0;
  std::string backend;
  Summary time_s;  // per all-reduce, the slowest rank's, after warm-up
  std::vector<double> samples_s;
  double algbw_gbs = 0.0;  // bytes / median time / 1e9
  double busbw_gbs = 0.0;  // algbw x 2(n-1)/n
};

// All-reduces (sum) a buffer of `floats` fp32 values on `device` until `m` says done. Warm-up steps
// first (Gloo and NCCL set up their buffers and connections on the first call of a size).
AllreduceResult benchmark_allreduce(Comm& comm, int64_t floats, const MeasureSettings& m,
                                    const DeviceSpec& device = DeviceSpec{});

// The whole benchmark in this process as one rank: the environment (torchrun variables, as under
// `launch`), the store (rank 0 hosts it), a process group of `s.backend` (auto: Gloo; nccl: on GPU
// LOCAL_RANK), then every size in turn. Every rank gets the same results. Throws InputError for bad
// variables; c10 errors (rendezvous timeout) propagate.
struct AllreduceRun {
  int rank = 0;
  std::vector<AllreduceResult> results;
};
AllreduceRun run_allreduce_benchmark(const std::vector<int64_t>& sizes, const MeasureSettings& m,
                                     const DistSettings& s);

// A console table of results: size, bytes, median time, algbw, busbw (GB/s = 1e9 bytes/s).
std::string allreduce_table(const std::vector<AllreduceResult>& results);

}  // namespace trainbench::dist
