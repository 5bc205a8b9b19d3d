// Data-parallel runs started the way clusters start them: the real torchrun (its agent's store on and
// off, one node and two), the real mpirun, and two nodes in two network namespaces (or, where this
// machine may not create namespaces, two launchers on loopback), including a node that dies mid-sweep.
// Each compares its records with those of `trainbench launch` on the same cases.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli_util.h"
#include "results/results_file.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

using namespace test;

const std::string kCases = " --model convnet --set channels=4 --set depth=1 --set image=8 --batch 2";
const std::string kFast = " --warmup 1 --min-steps 3 --min-time 0 --max-time 1 --max-noise 100";
// What a worker is started with: every launcher's variables of this shell removed first.
const std::string kClean =
    "env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u LOCAL_WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT -u GROUP_RANK "
    "-u TORCHELASTIC_RUN_ID -u TRAINBENCH_LAUNCH -u SLURM_PROCID -u OMPI_COMM_WORLD_RANK -u PMI_RANK ";

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// The fields a data-parallel record shares with the same case under any other launcher (the timings
// differ from run to run; these follow from the case and the world).
void expect_same_records(const ResultsFile& got, const ResultsFile& want, const std::string& what) {
  ASSERT_EQ(got.benchmarks.size(), want.benchmarks.size()) << what;
  EXPECT_EQ(got.context.world_size, want.context.world_size) << what;
  EXPECT_EQ(got.context.dist_backend, want.context.dist_backend) << what;
  for (size_t i = 0; i < got.benchmarks.size(); ++i) {
    const Record& g = got.benchmarks[i];
    const Record& w = want.benchmarks[i];
    ASSERT_TRUE(g.ok()) << what << ": " << g.error;
    ASSERT_TRUE(w.ok()) << what << " (launch): " << w.error;
    EXPECT_EQ(g.name, w.name) << what;
    EXPECT_EQ(g.parameters, w.parameters) << what;
    EXPECT_EQ(g.flops_per_step, w.flops_per_step) << what;
    ASSERT_TRUE(g.dist && w.dist) << what;
    EXPECT_EQ(g.dist->world_size, w.dist->world_size) << what;
    EXPECT_EQ(g.dist->buckets, w.dist->buckets) << what;
    EXPECT_EQ(g.dist->rank_step_time_s.size(), w.dist->rank_step_time_s.size()) << what;
    ASSERT_TRUE(g.memory && w.memory) << what;
    EXPECT_EQ(g.memory->comm_buffer_bytes, w.memory->comm_buffer_bytes) << what;
  }
}

// Two ranks of the tiny convnet at batches 2 and 4 under `trainbench launch`: the reference records.
const ResultsFile& launch_reference() {
  static const ResultsFile f = [] {
    const fs::path dir = temp_dir("launchers", "reference");
    const CmdResult r =
        run_trainbench("launch --nproc 2 -- run" + kCases + ",4 --dist --dist-timeout 60 --no-baseline" + kFast +
                           " -o " + (dir / "r.json").string(),
                       dir, RunWith{"-u RANK -u WORLD_SIZE -u TORCHELASTIC_RUN_ID", 240});
    EXPECT_EQ(r.code, 0) << r.err;
    return read_results((dir / "r.json").string());
  }();
  return f;
}

std::string torchrun() {
  const std::string exe = TRAINBENCH_TORCHRUN;
  return exe;
}

// The major version of the torch whose torchrun the tests use (its Python's, beside it).
int torchrun_major() {
  static const int major = [] {  // asked once: importing torch takes seconds
    const fs::path python = fs::path(torchrun()).parent_path() / "python";
    const fs::path out = temp_dir("launchers", "version") / "v.txt";
    shell(python.string() + " -c 'import torch; print(torch.__version__.split(\".\")[0])' > " + out.string());
    const std::string v = slurp(out);
    return v.empty() ? 0 : std::stoi(v);
  }();
  return major;
}

// Under a LibTorch older than the torchrun's, rank 0 hosts the store (see the test below).
std::string agent_store_setting() {
  return TRAINBENCH_TORCH_MAJOR < 2 && torchrun_major() >= 2 ? "TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 " : "";
}

// torchrun --standalone: by default its agent hosts the store and tells the workers so
// (TORCHELASTIC_USE_AGENT_STORE=True: rank 0 must connect, not start a server); with
// TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 it does not, and rank 0 hosts it as under `launch`.
TEST(DistLaunchers, TorchrunOneNodeWithAndWithoutTheAgentStore) {
  if (torchrun().empty()) GTEST_SKIP() << "no torchrun here (make setup TORCH=pip installs it; pip builds require it)";
  for (const std::string mode : {"True", "False"}) {
    const fs::path dir = temp_dir("launchers", "torchrun_" + mode);
    const std::string share = mode == "True" ? "" : "TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 ";
    // The workers note what torchrun told them, then become trainbench.
    const std::string cmd = "cd " + dir.string() + " && " + kClean + share + "timeout -k 5 240 " + torchrun() +
                            " --standalone --nproc-per-node 2 --no-python sh -c 'echo $TORCHELASTIC_USE_AGENT_STORE" +
                            " >> agent.txt; exec \"$0\" \"$@\"' " + TRAINBENCH_EXE + " run" + kCases +
                            ",4 --dist --dist-timeout 60 --no-baseline" + kFast + " -o r.json > out.txt 2> err.txt";
    const int code = shell(cmd);
    EXPECT_EQ(slurp(dir / "agent.txt"), mode + "\n" + mode + "\n");
    if (mode == "True" && TRAINBENCH_TORCH_MAJOR < 2 && torchrun_major() >= 2) {
      // LibTorch 1.13's store client cannot talk to a torch 2.x agent's store: one clear line says so
      // and what to do (the other mode, below, is the way).
      EXPECT_NE(code, 0);
      EXPECT_NE(slurp(dir / "err.txt").find("TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 so that rank 0 hosts the store"),
                std::string::npos)
          << slurp(dir / "err.txt");
      continue;
    }
    ASSERT_EQ(code, 0) << mode << "\n" << slurp(dir / "err.txt");
    const ResultsFile f = read_results((dir / "r.json").string());
    EXPECT_EQ(f.context.dist_launcher, std::optional<std::string>("torchrun"));
    EXPECT_EQ(f.context.dist_nodes, 1);
    expect_same_records(f, launch_reference(), "torchrun, agent store " + mode);
    EXPECT_EQ(slurp(dir / "err.txt").find("trainbench: error"), std::string::npos) << slurp(dir / "err.txt");
    // No second server at the agent's address: LibTorch 2.11's TCPStore forgives that bind under the
    // agent's store with an error line on stderr; 1.13's fails the worker.
    EXPECT_EQ(slurp(dir / "err.txt").find("failed to bind"), std::string::npos) << slurp(dir / "err.txt");
  }
}

// Two torchrun agents (two "nodes" of one rank each) meeting in a c10d rendezvous, with the agent's
// store (where this LibTorch can talk to it) and without.
TEST(DistLaunchers, TorchrunTwoNodesC10dRendezvous) {
  if (torchrun().empty()) GTEST_SKIP() << "no torchrun here (make setup TORCH=pip installs it; pip builds require it)";
  std::vector<std::string> settings = {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 "};
  if (agent_store_setting().empty()) settings.push_back("");
  for (const std::string& setting : settings) {
    const fs::path dir = temp_dir("launchers", setting.empty() ? "torchrun_nodes_agent" : "torchrun_nodes");
    const std::string endpoint = "127.0.0.1:" + std::to_string(free_port());
    std::string cmd = "cd " + dir.string() + "; ";  // not `&&`: the first `&` would take the cd into its subshell
    for (int node = 0; node < 2; ++node) {
      const std::string n = std::to_string(node);
      cmd += kClean + setting + "timeout -k 5 240 " + torchrun() + " --nnodes 2 --nproc-per-node 1 " +
             "--rdzv-backend c10d --rdzv-endpoint " + endpoint + " --rdzv-id tb --no-python " + TRAINBENCH_EXE +
             " run" + kCases + ",4 --dist --dist-timeout 60 --no-baseline" + kFast + " -o r" + n + ".json > out" + n +
             ".txt 2> err" + n + ".txt & ";
    }
    cmd += "wait %1 && wait %2";
    ASSERT_EQ(shell(cmd), 0) << setting << slurp(dir / "err0.txt") << slurp(dir / "err1.txt");
    // One results file: only rank 0 writes, whichever node it landed on.
    const bool on0 = fs::exists(dir / "r0.json");
    ASSERT_NE(on0, fs::exists(dir / "r1.json")) << setting;
    const ResultsFile f = read_results((dir / (on0 ? "r0.json" : "r1.json")).string());
    EXPECT_EQ(f.context.dist_launcher, std::optional<std::string>("torchrun"));
    EXPECT_EQ(f.context.dist_nodes, 2);
    expect_same_records(f, launch_reference(), "torchrun --nnodes 2 " + setting);
    for (const char* err : {"err0.txt", "err1.txt"}) {
      EXPECT_EQ(slurp(dir / err).find("failed to bind"), std::string::npos) << slurp(dir / err);
    }
  }
}

TEST(DistLaunchers, MpirunTwoRanks) {
  ASSERT_STRNE(TRAINBENCH_MPIRUN, "") << "no mpirun: scripts/setup/setup-deps.sh installs openmpi-bin";
  const fs::path dir = temp_dir("launchers", "mpirun");
  const std::string cmd = "cd " + dir.string() + " && " + kClean +
                          "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 5 240 " +
                          TRAINBENCH_MPIRUN + " --oversubscribe -np 2 -x MASTER_PORT=" + std::to_string(free_port()) +
                          " " + TRAINBENCH_EXE + " run" + kCases + ",4 --dist --dist-timeout 60 --no-baseline" + kFast +
                          " -o r.json > out.txt 2> err.txt";
  ASSERT_EQ(shell(cmd), 0) << slurp(dir / "err.txt");
  const ResultsFile f = read_results((dir / "r.json").string());
  EXPECT_EQ(f.context.dist_launcher, std::optional<std::string>("mpirun (Open MPI)"));
  EXPECT_EQ(f.context.dist_nodes, 1);
  expect_same_records(f, launch_reference(), "mpirun");
}

// ---------------------------------------------------------------- two nodes

// Two nodes: network namespaces joined by a veth pair (10.233.x.1 and .2), each node's Gloo bound to
// its own interface; where namespaces cannot be made (no CAP_SYS_ADMIN), both nodes on loopback.
class TwoNodes {
 public:
  TwoNodes() {
    const std::string id = std::to_string(getpid() % 100000);
    ns_[0] = "tbn0_" + id;
    ns_[1] = "tbn1_" + id;
    veth_[0] = "tbv0_" + id;
    veth_[1] = "tbv1_" + id;
    const std::string net = "10.233." + std::to_string(getpid() % 250) + ".";
    std::string cmd = "ip netns add " + ns_[0] + " && ip netns add " + ns_[1] + " && ip link add " + veth_[0] +
                      " type veth peer name " + veth_[1];
    for (int n = 0; n < 2; ++n) {
      addr_[n] = net + std::to_string(n + 1);
      cmd += " && ip link set " + veth_[n] + " netns " + ns_[n] + " && ip -n " + ns_[n] + " addr add " + addr_[n] +
             "/24 dev " + veth_[n] + " && ip -n " + ns_[n] + " link set " + veth_[n] + " up && ip -n " + ns_[n] +
             " link set lo up";
    }
    namespaces_ = shell(cmd + " 2> /dev/null") == 0;
    if (!namespaces_) {
      remove();
      addr_[0] = addr_[1] = "127.0.0.1";
    }
  }
  ~TwoNodes() { remove(); }
  bool namespaces() const { return namespaces_; }
  std::string master() const { return addr_[0] + ":" + std::to_string(namespaces_ ? 29500 : free_port()); }
  // The shell prefix that runs a command on node `n`.
  std::string on(int n) const {
    return namespaces_ ? "ip netns exec " + ns_[n] + " env GLOO_SOCKET_IFNAME=" + veth_[n] + " " : std::string();
  }
  // Node `n` drops off the network at once (a power loss: no connection is closed, nothing answers).
  void cut(int n) const {
    if (namespaces_) shell("ip -n " + ns_[n] + " link set " + veth_[n] + " down");
  }

 private:
  void remove() {
    for (const auto& ns : ns_) shell("ip netns del " + ns + " 2> /dev/null");
  }
  std::string ns_[2], veth_[2], addr_[2];
  bool namespaces_ = false;
};

// Starts node `n`'s launcher of one rank in the background; returns its pid (a process group of its own).
pid_t start_node(const TwoNodes& nodes, int n, const std::string& master, const std::string& run_args,
                 const fs::path& dir) {
  const std::string cmd = nodes.on(n) + kClean + TRAINBENCH_EXE + " launch --nproc 1 --nnodes 2 --node-rank " +
                          std::to_string(n) + " --master " + master + " -- run" + run_args + " -o " +
                          (dir / ("r" + std::to_string(n) + ".json")).string() + " > " +
                          (dir / ("out" + std::to_string(n) + ".txt")).string() + " 2> " +
                          (dir / ("err" + std::to_string(n) + ".txt")).string();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DistLaunchers, TwoNodesOverSockets) {
  const TwoNodes nodes;
  RecordProperty("nodes", nodes.namespaces() ? "two network namespaces" : "two launchers on loopback");
  const fs::path dir = temp_dir("launchers", "two_nodes");
  const std::string master = nodes.master();
  const std::string args = kCases + ",4 --dist --dist-timeout 60 --no-baseline" + kFast;
  const pid_t a = start_node(nodes, 0, master, args, dir);
  const pid_t b = start_node(nodes, 1, master, args, dir);
  EXPECT_EQ(wait_exit(b), 0) << slurp(dir / "err1.txt");
  ASSERT_EQ(wait_exit(a), 0) << slurp(dir / "err0.txt");
  const ResultsFile f = read_results((dir / "r0.json").string());
  EXPECT_EQ(f.context.dist_launcher, std::optional<std::string>("trainbench launch"));
  EXPECT_EQ(f.context.dist_nodes, 2);
  expect_same_records(f, launch_reference(), nodes.namespaces() ? "two namespaces" : "two launchers");
}

// Node 1 dies during the second of three cases. Node 0 ends that case within --dist-timeout (its
// collective times out) plus --dist-timeout + 5 s (waiting for the lost rank's word), names rank 1,
// records the third case as not run, and keeps the first case's measurement.
TEST(DistLaunchers, ANodeThatDiesEndsTheCaseOnTheOtherAndNothingMeasuredIsLost) {
  const TwoNodes nodes;
  RecordProperty("nodes", nodes.namespaces() ? "two network namespaces" : "two launchers on loopback");
  const fs::path dir = temp_dir("launchers", "node_dies");
  const std::string master = nodes.master();
  const double timeout_s = 4;
  const std::string args = kCases + ",4,8 --dist --dist-timeout 4 --no-baseline --warmup 1 --min-steps 3 " +
                           "--min-time 3 --max-time 4 --max-noise 100";
  const pid_t a = start_node(nodes, 0, master, args, dir);
  const pid_t b = start_node(nodes, 1, master, args, dir);
  const auto t0 = std::chrono::steady_clock::now();
  while (slurp(dir / "err0.txt").find("case 2 of 3") == std::string::npos &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(slurp(dir / "err0.txt").find("case 2 of 3"), std::string::npos) << slurp(dir / "err0.txt");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // inside case 2's steps
  nodes.cut(1);
  kill(-b, SIGKILL);  // node 1's launcher, its worker and the worker's case child
  const auto died = std::chrono::steady_clock::now();
  wait_exit(b);
  const int code = wait_exit(a);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - died).count();
  EXPECT_NE(code, 0) << slurp(dir / "err0.txt");
  EXPECT_LT(took, timeout_s + (timeout_s + 5) + 10) << slurp(dir / "err0.txt");
  const ResultsFile f = read_results((dir / "r0.json").string());
  ASSERT_EQ(f.benchmarks.size(), 3u);
  EXPECT_TRUE(f.benchmarks[0].ok()) << f.benchmarks[0].error;
  EXPECT_GT(f.benchmarks[0].throughput, 0.0);
  EXPECT_FALSE(f.benchmarks[1].ok());
  EXPECT_NE(f.benchmarks[1].error.find("rank 1 did not end the case"), std::string::npos) << f.benchmarks[1].error;
  EXPECT_FALSE(f.benchmarks[2].ok());
  EXPECT_NE(f.benchmarks[2].error.find("not run: rank 1 was lost in case 2"), std::string::npos)
      << f.benchmarks[2].error;
}

}  // namespace
}  // namespace trainbench
