// A data-parallel worker's place in the job, read from the variables of the launcher that started it.
// One table (kLaunchers in env.cpp, docs/distributed.md "Launchers") says which variables each launcher
// sets and what they mean:
//   torchrun / trainbench launch   RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
//                                  MASTER_ADDR, MASTER_PORT (torchrun also TORCHELASTIC_RUN_ID,
//                                  TORCHELASTIC_USE_AGENT_STORE, TORCHELASTIC_RESTART_COUNT)
//   Kubeflow PyTorchJob            RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT per pod (one rank per pod)
//   srun (SLURM)                   SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID,
//                                  SLURM_STEP_TASKS_PER_NODE, the first host of SLURM_STEP_NODELIST
//   mpirun (Open MPI)              OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
//   mpiexec (MPICH, Intel MPI)     PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS
// MASTER_ADDR and MASTER_PORT, when set, name rank 0's store for every launcher; otherwise srun's first
// host, or 127.0.0.1 for an MPI job on one node, and port kDefaultMasterPort.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace trainbench::dist {

constexpr uint16_t kDefaultMasterPort = 29500;  // torchrun's default

struct DistEnv {
  std::string launcher = "environment";  // which row of the table was read (for messages and docs)
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;  // workers on this node
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  uint16_t master_port = kDefaultMasterPort;
  // torchrun's agent hosts the store at MASTER_ADDR:MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True):
  // every rank, rank 0 included, connects to it as a client and none starts a server.
  bool agent_store = false;
  // Every key trainbench puts in the store is under this prefix: one per torchrun restart, so that a
  // restarted attempt never reads the keys of the one before ("" when there are no restarts).
  std::string store_prefix;
  // Whether all ranks run on this host (one node): only then may Gloo bind to loopback.
  bool one_host() const { return local_world_size == world_size; }
  // Kubernetes pods: rank 0's pod may be told MASTER_ADDR=localhost while the others reach it by name.
  bool pod = false;
};

// Reads the variables through `get` (getenv in production, a map in tests). Throws InputError with one
// line naming the variables for a missing, invalid or contradictory value, e.g. "RANK=3 is not below
// WORLD_SIZE=2" or "RANK=1 and OMPI_COMM_WORLD_RANK=0 disagree".
DistEnv dist_env_from(const std::function<const char*(const char*)>& get);
DistEnv dist_env_from_process();

// "host:port" with port in 1..65535; throws InputError quoting `what` otherwise.
std::pair<std::string, uint16_t> parse_host_port(const std::string& text, const std::string& what);

// The first host of a SLURM hostlist: "gpu[003-010,12],login1" -> "gpu003"; "a-[1-2]-ib" -> "a-1-ib".
// Throws InputError naming `what` for an empty or malformed list.
std::string first_slurm_host(const std::string& hostlist, const std::string& what);

// This node's task count from SLURM's "2(x3),1" form (node 0..2 run 2 tasks, node 3 runs 1).
int slurm_tasks_on_node(const std::string& tasks_per_node, int node, const std::string& what);

}  // namespace trainbench::dist
