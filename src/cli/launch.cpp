// `trainbench launch` (start this node's data-parallel workers) and the hidden `dist-allreduce`
// (the all-reduce micro-benchmark run inside launch; `op allreduce:SIZE` is its public form).
#include <iostream>
#include <limits>

#include "cli/commands.h"
#include "cli/options.h"
#include "dist/allreduce_bench.h"
#include "dist/env.h"
#include "dist/launcher.h"
#include "dist/process_group.h"
#include "runner/plan.h"

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
  const ChildSettings settings = o.measure.resolve();
  const dist::DistEnv e = dist::dist_env_from_process();
  const std::string backend = dist::resolve_backend(o.dist.backend, false);
  dist::StorePtr store = dist::connect_store(e, e.rank == 0, o.dist.timeout_s);
  dist::CommPtr comm = dist::make_comm(dist::prefixed("trainbench/allreduce/", store), e, backend, o.dist.timeout_s);
  std::vector<dist::AllreduceResult> results;
  for (int64_t n : sizes) results.push_back(dist::benchmark_allreduce(*comm, n, settings.measure));
  if (e.rank == 0) std::cout << dist::allreduce_table(results) << std::flush;
  comm->barrier()->wait();  // rank 0 hosts the store: leave together
  return kExitOk;
}

}  // namespace trainbench::cli
