// `trainbench launch` (start this node's data-parallel workers) and `op allreduce:SIZE`
// (the all-reduce micro-benchmark run inside launch).
#include <iostream>
#include <limits>

#include "cli/commands.h"
#include "cli/options.h"
#include "dist/allreduce_bench.h"
#include "dist/launcher.h"
#include "core/value_rules.h"

namespace trainbench::cli {

int cmd_launch(const LaunchFlags& o) {
  dist::LaunchOptions l;
  l.nproc = o.nproc;
  l.nnodes = o.nnodes;
  l.node_rank = o.node_rank;
  l.master = o.master;
  l.grace_s = o.grace_s;
  return dist::launch_workers(l, o.worker_args);
}

int cmd_dist_allreduce(const AllreduceFlags& o) {
  std::vector<int64_t> sizes;
  if (o.cases.empty()) {
    sizes = dist::deepbench_allreduce_sizes();
  } else {
    for (const auto& d : split_list(o.cases, "all-reduce case")) {
      try {
        sizes.push_back(dist::parse_allreduce(d).floats);
      } catch (const DescriptorError& e) {
        throw InputError(e.what());
      }
    }
  }
  dist::DistSettings s;
  s.backend = o.dist.backend;
  s.timeout_s = o.dist.timeout_s;
  const dist::AllreduceRun run = dist::run_allreduce_benchmark(sizes, o.measure.resolve().measure, s);
  if (run.rank == 0) std::cout << dist::allreduce_table(run.results) << std::flush;
  return kExitOk;
}

}  // namespace trainbench::cli
