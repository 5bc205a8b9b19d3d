// `trainbench launch` (start this node's data-parallel workers) and `op allreduce:SIZE`
// (the all-reduce micro-benchmark run inside launch).
#include <iostream>
#include <limits>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/options.h"
#include "dist/allreduce_bench.h"
#include "dist/launcher.h"
#include "core/value_rules.h"

namespace trainbench::cli {

struct LaunchFlags {
  int nproc = 1, nnodes = 1, node_rank = 0;
  std::string master;
  double grace_s = 10.0;
  std::vector<std::string> worker_args;  // after --
};

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

Command add_launch(CLI::App& app) {
  auto o = std::make_shared<LaunchFlags>();
  CLI::App* sub = app.add_subcommand(
      "launch", "Start N data-parallel workers on this node: trainbench launch --nproc N -- run ... --dist");
  sub->add_option("--nproc", o->nproc, "Workers on this node (e.g. one per GPU)")->check(rule(kProcessCount));
  sub->add_option("--nnodes", o->nnodes, "Nodes in the job")->check(rule(kProcessCount));
  sub->add_option("--node-rank", o->node_rank, "This node's index, 0 to nnodes-1 (node 0 hosts rank 0)")
      ->check(rule(kNodeRank));
  sub->add_option("--master", o->master, "HOST:PORT of node 0 (default on one node: 127.0.0.1, a free port)");
  sub->add_option("--grace", o->grace_s, "Seconds stopped workers get before SIGKILL")->check(rule(kSeconds));
  sub->add_option("worker", o->worker_args, "The worker's arguments, after --")->required();
  sub->positionals_at_end();
  return {sub, [o] { return cmd_launch(*o); }};
}

}  // namespace trainbench::cli
