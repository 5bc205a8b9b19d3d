// `trainbench launch`: starts this node's workers of a data-parallel job, as torchrun does, and
// watches them. Each worker is this executable with the given arguments and the torchrun variables
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT).
#pragma once
#include <string>
#include <vector>

namespace trainbench::dist {

struct LaunchOptions {
  int nproc = 1;  // workers on this node
  int nnodes = 1;
  int node_rank = 0;
  std::string master;     // HOST:PORT of rank 0's store; "" (one node only): 127.0.0.1 and a free port
  double grace_s = 10.0;  // after SIGTERM, how long a worker may take to stop before SIGKILL
};

// Runs the workers to the end. Workers' stderr passes through, lines of ranks other than 0 prefixed
// with "[rank R] "; workers' stdout is this process's. Ctrl-C (SIGINT/SIGTERM) is forwarded. When a
// worker exits non-zero or by a signal the others are stopped (SIGTERM, then SIGKILL after grace_s)
// and one line says which: "trainbench: error: rank R exited with code C: <its last stderr line>".
// Returns the exit code for the launcher: 0 when all succeeded, 130 after Ctrl-C, else the failed
// worker's code (1 when it died by a signal). Throws InputError for bad options.
int launch_workers(const LaunchOptions& o, const std::vector<std::string>& worker_args);

// A TCP port on 127.0.0.1 free at the time of asking (the kernel's choice).
int free_local_port();

}  // namespace trainbench::dist
