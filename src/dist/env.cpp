#include "dist/env.h"

#include <cstdlib>
#include <vector>

#include "core/value_rules.h"

namespace trainbench::dist {
namespace {

using Get = std::function<const char*(const char*)>;

// One launcher's variables: the rank, the world, the local rank and the local world (nullptr: not set
// by this launcher), and the variable whose presence says the process was started by it.
struct Launcher {
  const char* name;
  const char* marker;
  const char* rank;
  const char* world;
  const char* local_rank;
  const char* local_world;
};

// clang-format off
// torchrun-style rows first: torchrun and trainbench launch are often started *by* srun or mpirun (one
// agent per node), and then their own variables are the workers' truth.
const Launcher kTorchrun{"torchrun", "TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"};
const Launcher kLaunch{"trainbench launch", "TRAINBENCH_LAUNCH", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"};
const Launcher kPlain{"RANK/WORLD_SIZE", "RANK", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"};
// Scheduler and MPI rows, in the order they win when several are set: mpirun inside a SLURM allocation
// starts its daemons with srun, so the SLURM variables there describe the daemons, not the ranks.
const Launcher kOpenMpi{"mpirun (Open MPI)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                        "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"};
const Launcher kMpich{"mpiexec (MPICH)", "PMI_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"};
const Launcher kSrun{"srun", "SLURM_PROCID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr};
// clang-format on

long parse_number(const char* name, const std::string& value, long lo, long hi) {
  if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos) {
    throw InputError(std::string(name) + "='" + value + "' is not a number (a launcher's variable)");
  }
  const long v = std::stol(value);
  if (v < lo || v > hi) {
    throw InputError(std::string(name) + "=" + value + " is out of range (" + std::to_string(lo) + " to " +
                     std::to_string(hi) + ")");
  }
  return v;
}

bool has(const Get& get, const char* name) { return name != nullptr && get(name) != nullptr; }

int number(const Get& get, const char* name, long lo, long hi) {
  return static_cast<int>(parse_number(name, get(name), lo, hi));
}

// The rank and the world of row `l`, both required once its marker is set.
void read_rank_and_world(const Get& get, const Launcher& l, DistEnv& e) {
  for (const char* v : {l.world, l.rank}) {
    if (!has(get, v)) {
      const char* other = v == l.world ? l.rank : l.world;
      throw InputError(std::string("--dist needs ") + v + " in the environment next to " + other + " (" + l.name +
                       " sets both)");
    }
  }
  e.world_size = number(get, l.world, 1, 1 << 20);
  e.rank = number(get, l.rank, 0, 1 << 20);
  if (e.rank >= e.world_size) {
    throw InputError(std::string(l.rank) + "=" + std::to_string(e.rank) + " is not below " + l.world + "=" +
                     std::to_string(e.world_size));
  }
}

// The local world and rank of row `l` (srun's local world from its tasks-per-node list).
void read_local(const Get& get, const Launcher& l, DistEnv& e) {
  if (&l == &kSrun) {
    e.node_rank = has(get, "SLURM_NODEID") ? number(get, "SLURM_NODEID", 0, 1 << 20) : 0;
    const char* tasks = has(get, "SLURM_STEP_TASKS_PER_NODE") ? "SLURM_STEP_TASKS_PER_NODE"
                        : has(get, "SLURM_TASKS_PER_NODE")    ? "SLURM_TASKS_PER_NODE"
                                                              : nullptr;
    e.local_world_size = tasks ? slurm_tasks_on_node(get(tasks), e.node_rank, tasks) : e.world_size;
  } else {
    e.local_world_size = has(get, l.local_world) ? number(get, l.local_world, 1, e.world_size) : e.world_size;
  }
  if (e.local_world_size > e.world_size) {
    throw InputError("this node's " + std::to_string(e.local_world_size) + " tasks exceed " + l.world + "=" +
                     std::to_string(e.world_size));
  }
  e.local_rank = has(get, l.local_rank) ? number(get, l.local_rank, 0, 1 << 20) : e.rank % e.local_world_size;
  if (e.local_rank >= e.local_world_size) {
    throw InputError(std::string(l.local_rank ? l.local_rank : "the local rank") + "=" + std::to_string(e.local_rank) +
                     " is not below " + (l.local_world ? l.local_world : "this node's task count") + "=" +
                     std::to_string(e.local_world_size));
  }
  if (&l != &kSrun) e.node_rank = e.rank / e.local_world_size;
}

// RANK/WORLD_SIZE set by hand (or left over in the shell) next to an MPI or SLURM launcher's variables:
// both must describe the same place in the job.
void check_agreement(const Get& get, const DistEnv& e, const Launcher& other) {
  DistEnv o;
  read_rank_and_world(get, other, o);
  if (o.world_size != e.world_size) {
    throw InputError("WORLD_SIZE=" + std::to_string(e.world_size) + " and " + other.world + "=" +
                     std::to_string(o.world_size) + " disagree (two launchers' variables: unset the stale ones)");
  }
  if (o.rank != e.rank) {
    throw InputError("RANK=" + std::to_string(e.rank) + " and " + other.rank + "=" + std::to_string(o.rank) +
                     " disagree (two launchers' variables: unset the stale ones)");
  }
}

const Launcher* mpi_or_slurm(const Get& get) {
  if (has(get, kOpenMpi.marker)) return &kOpenMpi;
  if (has(get, kMpich.marker)) return &kMpich;
  if (has(get, kSrun.marker)) {
    // The batch script of `sbatch` has SLURM_PROCID=0 too; only srun's tasks have a step id.
    if (!has(get, "SLURM_STEP_ID") && !has(get, "SLURM_STEPID")) {
      throw InputError(
          "SLURM_PROCID is set but no SLURM_STEP_ID: this is a batch script, not a task of srun (start the "
          "ranks with srun, e.g. srun --ntasks-per-node 8 trainbench run ... --dist)");
    }
    return &kSrun;
  }
  return nullptr;
}

// The master: MASTER_ADDR and MASTER_PORT when set (required by the torchrun-style rows), else srun's
// first host or, for an MPI job on one node, 127.0.0.1; the port then defaults to kDefaultMasterPort.
void read_master(const Get& get, const Launcher& l, DistEnv& e) {
  const bool torchrun_style = std::string(l.rank) == "RANK";
  if (has(get, "MASTER_ADDR")) {
    e.master_addr = get("MASTER_ADDR");
    if (e.master_addr.empty()) throw InputError("MASTER_ADDR is empty");
  } else if (torchrun_style) {
    throw InputError(std::string("--dist needs MASTER_ADDR in the environment (") + l.name + " sets it)");
  } else if (&l == &kSrun) {
    const char* list = has(get, "SLURM_STEP_NODELIST")  ? "SLURM_STEP_NODELIST"
                       : has(get, "SLURM_JOB_NODELIST") ? "SLURM_JOB_NODELIST"
                                                        : nullptr;
    if (list == nullptr) throw InputError("srun set no SLURM_STEP_NODELIST or SLURM_JOB_NODELIST: set MASTER_ADDR");
    e.master_addr = first_slurm_host(get(list), list);
  } else if (e.one_host()) {
    e.master_addr = "127.0.0.1";
  } else {
    throw InputError(std::string(l.name) + " runs " + std::to_string(e.world_size) + " ranks on several nodes (" +
                     l.local_world + "=" + std::to_string(e.local_world_size) +
                     ") and does not name rank 0's host: set MASTER_ADDR (e.g. mpirun -x MASTER_ADDR=node1)");
  }
  if (has(get, "MASTER_PORT")) {
    e.master_port = static_cast<uint16_t>(number(get, "MASTER_PORT", 1, 65535));
  } else if (torchrun_style) {
    throw InputError(std::string("--dist needs MASTER_PORT in the environment (") + l.name + " sets it)");
  }
}

}  // namespace

std::pair<std::string, uint16_t> parse_host_port(const std::string& text, const std::string& what) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw InputError("bad " + what + " '" + text + "' (expected HOST:PORT, e.g. 10.0.0.1:29500)");
  }
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stol(port) < 1 ||
      std::stol(port) > 65535) {
    throw InputError("bad " + what + " '" + text + "': port '" + port + "' is not 1 to 65535");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {host, static_cast<uint16_t>(std::stol(port))};
}

std::string first_slurm_host(const std::string& hostlist, const std::string& what) {
  auto bad = [&] { return InputError(what + "='" + hostlist + "' is not a SLURM host list"); };
  // The first entry: up to the first comma outside brackets.
  size_t end = 0;
  int depth = 0;
  for (; end < hostlist.size(); ++end) {
    const char ch = hostlist[end];
    if (ch == '[') ++depth;
    if (ch == ']' && --depth < 0) throw bad();
    if (ch == ',' && depth == 0) break;
  }
  if (depth != 0) throw bad();
  const std::string entry = hostlist.substr(0, end);
  const auto open = entry.find('[');
  if (open == std::string::npos) {
    if (entry.empty()) throw bad();
    return entry;
  }
  const auto close = entry.find(']', open);
  const std::string ranges = entry.substr(open + 1, close - open - 1);
  const std::string first = ranges.substr(0, ranges.find_first_of(",-"));
  if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos) throw bad();
  const std::string rest = entry.substr(close + 1);  // "-n[1-3]" of "rack[2,4]-n[1-3]": its first too
  return entry.substr(0, open) + first + (rest.find('[') == std::string::npos ? rest : first_slurm_host(rest, what));
}

int slurm_tasks_on_node(const std::string& tasks_per_node, int node, const std::string& what) {
  auto bad = [&] { return InputError(what + "='" + tasks_per_node + "' is not SLURM's tasks-per-node list"); };
  int seen = 0;
  size_t pos = 0;
  while (pos < tasks_per_node.size()) {
    size_t next = tasks_per_node.find(',', pos);
    if (next == std::string::npos) next = tasks_per_node.size();
    const std::string item = tasks_per_node.substr(pos, next - pos);  // "2" or "2(x3)"
    const auto paren = item.find("(x");
    const std::string count = item.substr(0, paren);
    const std::string times = paren == std::string::npos ? "1" : item.substr(paren + 2, item.size() - paren - 3);
    if (paren != std::string::npos && item.back() != ')') throw bad();
    for (const std::string& n : {count, times}) {
      if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos) throw bad();
    }
    seen += std::stoi(times);
    if (node < seen) return std::stoi(count);
    pos = next + 1;
  }
  throw InputError(what + "='" + tasks_per_node + "' has no entry for node " + std::to_string(node));
}

DistEnv dist_env_from(const Get& get) {
  DistEnv e;
  const Launcher* l = nullptr;
  if (has(get, "RANK") || has(get, "WORLD_SIZE")) {
    l = has(get, kTorchrun.marker) ? &kTorchrun : has(get, kLaunch.marker) ? &kLaunch : &kPlain;
  } else {
    l = mpi_or_slurm(get);
  }
  if (l == nullptr) {
    throw InputError(
        "--dist needs a launcher's variables in the environment: RANK and WORLD_SIZE (trainbench launch, "
        "torchrun, a PyTorchJob), OMPI_COMM_WORLD_RANK (mpirun) or SLURM_PROCID (srun)");
  }
  read_rank_and_world(get, *l, e);
  if (l == &kPlain) {
    // By hand or by a PyTorchJob: must not contradict an MPI or SLURM launcher's variables.
    if (const Launcher* other = mpi_or_slurm(get)) check_agreement(get, e, *other);
    // A PyTorchJob starts one rank per pod and sets no LOCAL_* variables.
    e.pod = has(get, "KUBERNETES_SERVICE_HOST") && !has(get, "LOCAL_RANK") && !has(get, "LOCAL_WORLD_SIZE");
    if (e.pod) e.launcher = "PyTorchJob";
  }
  if (e.pod) {
    e.local_world_size = 1;
    e.local_rank = 0;
    e.node_rank = e.rank;
  } else {
    read_local(get, *l, e);
    e.launcher = l->name;
  }
  read_master(get, *l, e);
  if ((l == &kTorchrun || l == &kLaunch) && has(get, "GROUP_RANK")) e.node_rank = number(get, "GROUP_RANK", 0, 1 << 20);
  if (l == &kTorchrun) {
    e.agent_store =
        has(get, "TORCHELASTIC_USE_AGENT_STORE") && std::string(get("TORCHELASTIC_USE_AGENT_STORE")) == "True";
    if (has(get, "TORCHELASTIC_RESTART_COUNT")) {
      e.store_prefix = "attempt_" + std::to_string(number(get, "TORCHELASTIC_RESTART_COUNT", 0, 1 << 20)) + "/";
    }
  }
  return e;
}

DistEnv dist_env_from_process() {
  return dist_env_from([](const char* name) { return std::getenv(name); });
}

}  // namespace trainbench::dist
