// Data parallelism (src/dist): the all-reduce descriptor, torchrun variables, and gradient averaging
// in one process (two ranks as two threads over an in-memory store): after each step both ranks hold
// the same parameters, equal to one step on the concatenated batch.
#include <gtest/gtest.h>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <map>
#include <thread>

#include "dist/allreduce_bench.h"
#include "dist/env.h"
#include "dist/grad_allreduce.h"
#include "dist/process_group.h"
#include "runner/plan.h"

namespace trainbench {
namespace {

// ---------------------------------------------------------------- allreduce:SIZE

TEST(DistAllreduceDescriptor, PrintParseRoundTrips) {
  for (const std::string s :
       {"allreduce:100K", "allreduce:3097600", "allreduce:4194304", "allreduce:6553600", "allreduce:16777217",
        "allreduce:38360K", "allreduce:64.5M", "allreduce:1", "allreduce:2M", "allreduce:1.5M", "allreduce:999"}) {
    EXPECT_EQ(dist::parse_allreduce(s).descriptor(), s);
  }
  for (int64_t n : dist::deepbench_allreduce_sizes()) {
    const std::string d = dist::AllreduceCase{n}.descriptor();
    EXPECT_EQ(dist::parse_allreduce(d).floats, n) << d;
    EXPECT_EQ(dist::parse_allreduce(d).descriptor(), d);
  }
  EXPECT_EQ(dist::deepbench_allreduce_sizes().front(), 100'000);
  EXPECT_EQ(dist::deepbench_allreduce_sizes().back(), 64'500'000);
  // Other spellings of the same size print in the canonical form.
  EXPECT_EQ(dist::parse_allreduce("allreduce:64500000").descriptor(), "allreduce:64.5M");
  EXPECT_EQ(dist::parse_allreduce("allreduce:100000").descriptor(), "allreduce:100K");
  EXPECT_EQ(dist::parse_allreduce("allreduce:0.1M").floats, 100'000);
}

TEST(DistAllreduceDescriptor, BadInputIsOneLineNamingIt) {
  for (const std::string s : {"allreduce:", "allreduce:x", "allreduce:1.5", "allreduce:1.2345K", "allreduce:0",
                              "allgather:5", "allreduce:5G", "allreduce:-3", "allreduce:99999999999999"}) {
    try {
      dist::parse_allreduce(s);
      ADD_FAILURE() << s << " parsed";
    } catch (const DescriptorError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'" + s + "'"), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

// ---------------------------------------------------------------- torchrun variables

dist::DistEnv env_of(const std::map<std::string, std::string>& vars) {
  return dist::dist_env_from([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

void expect_env_error(const std::map<std::string, std::string>& vars, const std::string& fragment) {
  try {
    env_of(vars);
    ADD_FAILURE() << "no error; expected " << fragment;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(DistEnv, ReadsTorchrunVariables) {
  const auto e = env_of({{"RANK", "5"},
                         {"WORLD_SIZE", "8"},
                         {"LOCAL_RANK", "1"},
                         {"LOCAL_WORLD_SIZE", "4"},
                         {"MASTER_ADDR", "10.0.0.1"},
                         {"MASTER_PORT", "29500"}});
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 4);
  EXPECT_EQ(e.master_addr, "10.0.0.1");
  EXPECT_EQ(e.master_port, 29500);
  // Without the LOCAL_ variables: one node.
  const auto one = env_of({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}});
  EXPECT_EQ(one.local_rank, 1);
  EXPECT_EQ(one.local_world_size, 2);
}

// Each launcher's variables, as each documents them, give the same place in the job.
TEST(DistEnv, EachLauncherOfTheTableIsRead) {
  struct Want {
    std::string launcher;
    int rank, world, local_rank, local_world, node;
    std::string master;
    int port;
  };
  struct Row {
    std::map<std::string, std::string> vars;
    Want want;
  };
  const std::vector<Row> rows = {
      // torchrun, 2 nodes x 4: its agent names itself with TORCHELASTIC_RUN_ID and GROUP_RANK is the node.
      {{{"TORCHELASTIC_RUN_ID", "j"},
        {"RANK", "5"},
        {"WORLD_SIZE", "8"},
        {"LOCAL_RANK", "1"},
        {"LOCAL_WORLD_SIZE", "4"},
        {"GROUP_RANK", "1"},
        {"MASTER_ADDR", "n0"},
        {"MASTER_PORT", "29400"}},
       {"torchrun", 5, 8, 1, 4, 1, "n0", 29400}},
      // torchrun started by srun (one agent per node): torchrun's variables win over the agent's task's.
      {{{"TORCHELASTIC_RUN_ID", "j"},
        {"RANK", "6"},
        {"WORLD_SIZE", "8"},
        {"LOCAL_RANK", "2"},
        {"LOCAL_WORLD_SIZE", "4"},
        {"MASTER_ADDR", "n0"},
        {"MASTER_PORT", "1"},
        {"SLURM_PROCID", "1"},
        {"SLURM_STEP_ID", "0"},
        {"SLURM_NTASKS", "2"}},
       {"torchrun", 6, 8, 2, 4, 1, "n0", 1}},
      {{{"TRAINBENCH_LAUNCH", "1"},
        {"RANK", "3"},
        {"WORLD_SIZE", "4"},
        {"LOCAL_RANK", "1"},
        {"LOCAL_WORLD_SIZE", "2"},
        {"GROUP_RANK", "1"},
        {"MASTER_ADDR", "h"},
        {"MASTER_PORT", "7"}},
       {"trainbench launch", 3, 4, 1, 2, 1, "h", 7}},
      // A PyTorchJob pod: one rank per pod, no LOCAL_ variables.
      {{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
        {"RANK", "2"},
        {"WORLD_SIZE", "3"},
        {"MASTER_ADDR", "job-master-0"},
        {"MASTER_PORT", "23456"}},
       {"PyTorchJob", 2, 3, 0, 1, 2, "job-master-0", 23456}},
      // srun -N 3 --ntasks-per-node 2 on nodes gpu[007-009]: task 3 is node 1's second.
      {{{"SLURM_PROCID", "3"},
        {"SLURM_NTASKS", "6"},
        {"SLURM_LOCALID", "1"},
        {"SLURM_NODEID", "1"},
        {"SLURM_STEP_ID", "0"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x3)"},
        {"SLURM_STEP_NODELIST", "gpu[007-009]"}},
       {"srun", 3, 6, 1, 2, 1, "gpu007", 29500}},
      // srun -n 5 over two nodes as 3 + 2, MASTER_PORT from the batch script; the node list of the job.
      {{{"SLURM_PROCID", "4"},
        {"SLURM_NTASKS", "5"},
        {"SLURM_LOCALID", "1"},
        {"SLURM_NODEID", "1"},
        {"SLURM_STEPID", "2"},
        {"SLURM_TASKS_PER_NODE", "3,2"},
        {"SLURM_JOB_NODELIST", "a-[1-2]-ib,b"},
        {"MASTER_PORT", "12345"}},
       {"srun", 4, 5, 1, 2, 1, "a-1-ib", 12345}},
      // mpirun -np 2 on one node (inside a SLURM allocation: its variables are the daemons', not the ranks').
      {{{"OMPI_COMM_WORLD_RANK", "1"},
        {"OMPI_COMM_WORLD_SIZE", "2"},
        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
        {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
        {"SLURM_PROCID", "0"},
        {"SLURM_STEP_ID", "0"}},
       {"mpirun (Open MPI)", 1, 2, 1, 2, 0, "127.0.0.1", 29500}},
      {{{"OMPI_COMM_WORLD_RANK", "5"},
        {"OMPI_COMM_WORLD_SIZE", "8"},
        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
        {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
        {"MASTER_ADDR", "node1"}},
       {"mpirun (Open MPI)", 5, 8, 1, 4, 1, "node1", 29500}},
      {{{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}},
       {"mpiexec (MPICH)", 1, 2, 1, 2, 0, "127.0.0.1", 29500}},
      // RANK/WORLD_SIZE by hand next to mpirun's, agreeing.
      {{{"RANK", "1"},
        {"WORLD_SIZE", "2"},
        {"MASTER_ADDR", "127.0.0.1"},
        {"MASTER_PORT", "3"},
        {"OMPI_COMM_WORLD_RANK", "1"},
        {"OMPI_COMM_WORLD_SIZE", "2"}},
       {"RANK/WORLD_SIZE", 1, 2, 1, 2, 0, "127.0.0.1", 3}},
  };
  for (const Row& row : rows) {
    std::string vars;
    for (const auto& [k, v] : row.vars) vars += k + "=" + v + " ";
    const dist::DistEnv e = env_of(row.vars);
    const Want got{e.launcher,         e.rank,      e.world_size,  e.local_rank,
                   e.local_world_size, e.node_rank, e.master_addr, e.master_port};
    EXPECT_EQ(got.launcher, row.want.launcher) << vars;
    EXPECT_EQ(std::vector<int>({got.rank, got.world, got.local_rank, got.local_world, got.node, got.port}),
              std::vector<int>({row.want.rank, row.want.world, row.want.local_rank, row.want.local_world, row.want.node,
                                row.want.port}))
        << vars;
    EXPECT_EQ(got.master, row.want.master) << vars;
    EXPECT_FALSE(e.agent_store) << vars;
    EXPECT_EQ(e.pod, row.want.launcher == "PyTorchJob") << vars;
  }
}

// torchrun's agent hosts the store (every rank a client) and restarts count attempts (a key prefix each).
TEST(DistEnv, TorchrunAgentStoreAndRestarts) {
  std::map<std::string, std::string> v = {
      {"TORCHELASTIC_RUN_ID", "x"}, {"RANK", "0"},        {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"},
      {"LOCAL_WORLD_SIZE", "2"},    {"MASTER_ADDR", "h"}, {"MASTER_PORT", "5"}};
  EXPECT_FALSE(env_of(v).agent_store);
  EXPECT_EQ(env_of(v).store_prefix, "");
  v["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  v["TORCHELASTIC_RESTART_COUNT"] = "2";
  EXPECT_TRUE(env_of(v).agent_store);
  EXPECT_EQ(env_of(v).store_prefix, "attempt_2/");
  v["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  EXPECT_FALSE(env_of(v).agent_store);
  // Only torchrun's own rows: the same variable beside a hand-set RANK means nothing.
  v.erase("TORCHELASTIC_RUN_ID");
  v["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  EXPECT_FALSE(env_of(v).agent_store);
}

TEST(DistEnv, SlurmListsAreParsed) {
  EXPECT_EQ(dist::first_slurm_host("node01", "L"), "node01");
  EXPECT_EQ(dist::first_slurm_host("gpu[003-010,12],login1", "L"), "gpu003");
  EXPECT_EQ(dist::first_slurm_host("rack[2,4]-n[1-3]", "L"), "rack2-n1");
  EXPECT_EQ(dist::first_slurm_host("a,b", "L"), "a");
  for (const char* bad : {"", "gpu[", "gpu[x-1]", "]a", "gpu[]"})
    EXPECT_THROW(dist::first_slurm_host(bad, "L"), InputError) << bad;
  EXPECT_EQ(dist::slurm_tasks_on_node("2(x3),1", 0, "T"), 2);
  EXPECT_EQ(dist::slurm_tasks_on_node("2(x3),1", 2, "T"), 2);
  EXPECT_EQ(dist::slurm_tasks_on_node("2(x3),1", 3, "T"), 1);
  EXPECT_EQ(dist::slurm_tasks_on_node("4", 0, "T"), 4);
  EXPECT_THROW(dist::slurm_tasks_on_node("2(x3),1", 4, "T"), InputError);
  for (const char* bad : {"", "x", "2(x", "2(3)", "2(x3"})
    EXPECT_THROW(dist::slurm_tasks_on_node(bad, 0, "T"), InputError) << bad;
}

// Contradicting or incomplete launchers' variables: one line naming them.
TEST(DistEnv, ContradictionsNameTheVariables) {
  expect_env_error({}, "--dist needs a launcher's variables");
  expect_env_error({{"RANK", "0"},
                    {"WORLD_SIZE", "2"},
                    {"MASTER_ADDR", "h"},
                    {"MASTER_PORT", "1"},
                    {"OMPI_COMM_WORLD_RANK", "1"},
                    {"OMPI_COMM_WORLD_SIZE", "2"}},
                   "RANK=0 and OMPI_COMM_WORLD_RANK=1 disagree");
  expect_env_error({{"RANK", "0"},
                    {"WORLD_SIZE", "4"},
                    {"MASTER_ADDR", "h"},
                    {"MASTER_PORT", "1"},
                    {"SLURM_PROCID", "0"},
                    {"SLURM_NTASKS", "2"},
                    {"SLURM_STEP_ID", "0"}},
                   "WORLD_SIZE=4 and SLURM_NTASKS=2 disagree");
  expect_env_error({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "a"}}, "no SLURM_STEP_ID");
  expect_env_error({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"}},
                   "SLURM_STEP_NODELIST or SLURM_JOB_NODELIST");
  expect_env_error({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"}, {"SLURM_JOB_NODELIST", "a"}},
                   "SLURM_PROCID=2 is not below SLURM_NTASKS=2");
  expect_env_error({{"SLURM_PROCID", "1"},
                    {"SLURM_NTASKS", "4"},
                    {"SLURM_STEP_ID", "0"},
                    {"SLURM_NODEID", "0"},
                    {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
                    {"SLURM_LOCALID", "2"},
                    {"SLURM_JOB_NODELIST", "a"}},
                   "SLURM_LOCALID=2 is not below");
  expect_env_error({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}},
                   "set MASTER_ADDR");
  expect_env_error({{"OMPI_COMM_WORLD_RANK", "0"}}, "--dist needs OMPI_COMM_WORLD_SIZE");
  expect_env_error({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"MASTER_PORT", "0"}}, "MASTER_PORT=0 is out of range");
}

TEST(DistEnv, MissingOrBadVariablesNameThemselves) {
  const std::map<std::string, std::string> ok = {
      {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}};
  for (const char* missing : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) {
    auto v = ok;
    v.erase(missing);
    expect_env_error(v, missing);
  }
  auto v = ok;
  v["RANK"] = "x";
  expect_env_error(v, "RANK='x' is not a number");
  v = ok;
  v["RANK"] = "2";
  expect_env_error(v, "RANK=2 is not below WORLD_SIZE=2");
  v = ok;
  v["WORLD_SIZE"] = "0";
  expect_env_error(v, "WORLD_SIZE=0 is out of range");
  v = ok;
  v["MASTER_PORT"] = "70000";
  expect_env_error(v, "MASTER_PORT=70000");
  v = ok;
  v["LOCAL_RANK"] = "3";
  expect_env_error(v, "LOCAL_RANK=3 is not below LOCAL_WORLD_SIZE=2");
  EXPECT_THROW(dist::parse_host_port("nohost", "--master"), InputError);
  EXPECT_THROW(dist::parse_host_port("h:0", "--master"), InputError);
  EXPECT_EQ(dist::parse_host_port("node1:29400", "--master"), (std::pair<std::string, uint16_t>{"node1", 29400}));
}

// ---------------------------------------------------------------- gradient averaging

// No batch statistics (no BatchNorm) and a mean loss: the gradient of the mean over the concatenated
// batch is exactly the mean of the two halves' gradients, so one data-parallel step must equal one
// step on the whole batch up to float rounding.
torch::nn::Sequential tiny_model() {
  return torch::nn::Sequential(torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 4, 3).padding(1)), torch::nn::ReLU(),
                               torch::nn::Flatten(), torch::nn::Linear(4 * 6 * 6, 5), torch::nn::Tanh(),
                               torch::nn::Linear(5, 3));
}

double checksum(torch::nn::Module& m) {
  double s = 0.0;
  int64_t k = 1;
  for (const auto& p : m.parameters())
    s += (p.to(torch::kDouble).flatten() * static_cast<double>(k++)).sum().item<double>();
  return s;
}

void expect_same_parameters(torch::nn::Module& a, torch::nn::Module& b, double tolerance) {
  const auto pa = a.parameters(), pb = b.parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    const double diff = (pa[i] - pb[i]).abs().max().item<double>();
    EXPECT_LE(diff, tolerance) << "parameter " << i;
  }
}

void run_two_ranks(int64_t bucket_bytes) {
  constexpr int kSteps = 3;
  torch::manual_seed(1);
  auto reference = tiny_model();
  torch::manual_seed(2);  // rank 1 starts elsewhere on purpose: the broadcast must fix that
  std::vector<torch::nn::Sequential> ranks = {tiny_model(), tiny_model()};
  {
    torch::NoGradGuard no_grad;
    auto src = reference->parameters(), dst = ranks[0]->parameters();
    for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
  }
  ASSERT_NE(checksum(*ranks[0]), checksum(*ranks[1]));
  std::vector<torch::Tensor> inputs, targets;
  for (int s = 0; s < kSteps; ++s) {
    inputs.push_back(torch::randn({6, 3, 6, 6}));
    targets.push_back(torch::randn({6, 3}));
  }

  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<double> sums(2);
  std::vector<size_t> buckets(2);
  std::vector<std::string> errors(2);
  auto rank_main = [&](int rank) {
    try {
      dist::DistEnv e;
      e.rank = rank;
      e.world_size = 2;
      e.master_addr = "127.0.0.1";
      dist::CommPtr comm = dist::make_comm(store, e, "gloo", 30.0);
      auto& model = ranks[static_cast<size_t>(rank)];
      dist::broadcast_from_rank0(*comm, model->parameters());
      dist::GradientAllreducer reducer(comm, model->parameters(), bucket_bytes);
      buckets[static_cast<size_t>(rank)] = reducer.bucket_count();
      torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
      for (int s = 0; s < kSteps; ++s) {
        const auto x = inputs[static_cast<size_t>(s)].narrow(0, 3 * rank, 3);
        const auto y = targets[static_cast<size_t>(s)].narrow(0, 3 * rank, 3);
        opt.zero_grad();
        const auto loss = torch::mse_loss(model->forward(x), y);
        reducer.before_backward();
        loss.backward();
        reducer.after_backward();
        EXPECT_GE(reducer.last_comm_s(), 0.0);  // every completion time arrived (NaN would fail)
        EXPECT_GE(reducer.last_exposed_s(), 0.0);
        opt.step();
      }
      sums[static_cast<size_t>(rank)] = checksum(*model);
    } catch (const std::exception& ex) {
      errors[static_cast<size_t>(rank)] = ex.what();
    }
  };
  std::thread t0(rank_main, 0), t1(rank_main, 1);
  t0.join();
  t1.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  EXPECT_EQ(buckets[0], buckets[1]);

  torch::optim::SGD opt(reference->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  for (int s = 0; s < kSteps; ++s) {
    opt.zero_grad();
    torch::mse_loss(reference->forward(inputs[static_cast<size_t>(s)]), targets[static_cast<size_t>(s)]).backward();
    opt.step();
  }
  // Every rank holds exactly the same parameters (the all-reduce hands all ranks the same sums)...
  EXPECT_EQ(sums[0], sums[1]);
  expect_same_parameters(*ranks[0], *ranks[1], 0.0);
  // ...equal to single-process steps on the concatenated batches, within float rounding.
  expect_same_parameters(*ranks[0], *reference, 1e-5);
  EXPECT_NEAR(sums[0], checksum(*reference), 1e-4 * std::max(1.0, std::abs(sums[0])));
}

TEST(DistGradients, TwoRanksEqualOneStepOnTheConcatenatedBatchOneBucket) { run_two_ranks(dist::kDefaultBucketBytes); }

TEST(DistGradients, TwoRanksEqualOneStepOnTheConcatenatedBatchManyBuckets) {
  run_two_ranks(64);  // smaller than any parameter: one bucket each, launched in order while backward runs
}

// A parameter that gets a gradient in one step and none in the next (unused in that forward) counts as
// zero there, as in one process, on every rank: not last step's average.
struct TwoHeads : torch::nn::Module {
  TwoHeads() {
    a = register_module("a", torch::nn::Linear(8, 3));
    b = register_module("b", torch::nn::Linear(8, 3));
  }
  torch::Tensor forward(const torch::Tensor& x, bool use_b) { return use_b ? a(x) + b(x) : a(x); }
  torch::nn::Linear a{nullptr}, b{nullptr};
};

// Zeroes gradients in place (not set to none, whatever the LibTorch's zero_grad default): a parameter
// unused in a step then has a zero gradient in one process and in data parallel alike.
void zero_in_place(torch::nn::Module& m) {
  for (auto& p : m.parameters()) {
    if (p.grad().defined()) p.mutable_grad().zero_();
  }
}

TEST(DistGradients, ParameterUnusedInAStepCountsAsZero) {
  torch::manual_seed(3);
  auto reference = std::make_shared<TwoHeads>();
  std::vector<std::shared_ptr<TwoHeads>> ranks = {std::make_shared<TwoHeads>(), std::make_shared<TwoHeads>()};
  const std::vector<torch::Tensor> x = {torch::randn({4, 8}), torch::randn({4, 8}), torch::randn({4, 8})};
  const std::vector<torch::Tensor> y = {torch::randn({4, 3}), torch::randn({4, 3}), torch::randn({4, 3})};
  const std::vector<bool> use_b = {true, false, false};
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> errors(2);
  auto rank_main = [&](int rank) {
    try {
      dist::DistEnv e;
      e.rank = rank;
      e.world_size = 2;
      dist::CommPtr comm = dist::make_comm(store, e, "gloo", 30.0);
      auto& model = ranks[static_cast<size_t>(rank)];
      dist::broadcast_from_rank0(*comm, model->parameters());
      if (rank == 0) {  // rank 0 holds the reference's start, broadcast to rank 1
        torch::NoGradGuard no_grad;
        auto src = model->parameters(), dst = reference->parameters();
        for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
      }
      dist::GradientAllreducer reducer(comm, model->parameters(), 64);
      torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
      for (size_t s = 0; s < x.size(); ++s) {
        zero_in_place(*model);
        const auto loss =
            torch::mse_loss(model->forward(x[s].narrow(0, 2 * rank, 2), use_b[s]), y[s].narrow(0, 2 * rank, 2));
        reducer.before_backward();
        loss.backward();
        reducer.after_backward();
        opt.step();
      }
    } catch (const std::exception& ex) {
      errors[static_cast<size_t>(rank)] = ex.what();
    }
  };
  std::thread t0(rank_main, 0), t1(rank_main, 1);
  t0.join();
  t1.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  torch::optim::SGD opt(reference->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  for (size_t s = 0; s < x.size(); ++s) {
    zero_in_place(*reference);
    torch::mse_loss(reference->forward(x[s], use_b[s]), y[s]).backward();
    opt.step();
  }
  expect_same_parameters(*ranks[0], *ranks[1], 0.0);
  expect_same_parameters(*ranks[0], *reference, 1e-5);
}

}  // namespace
}  // namespace trainbench
