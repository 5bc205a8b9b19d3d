#include "dist/dist_measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include "core/device.h"
#include "dist/grad_allreduce.h"
#include "memory/step_memory.h"
#include "runner/measure.h"
#include "runner/step_sampler.h"
#include "workloads/workload.h"
#include "workloads/registry.h"

namespace trainbench::dist {
namespace {

// Element-wise maximum of `values` over all ranks. The tensors live on the case's device: NCCL
// reduces device memory only.
std::vector<double> max_over_ranks(Comm& comm, const std::vector<double>& values, const torch::Device& dev) {
  std::vector<torch::Tensor> t = {torch::tensor(values, torch::kDouble).to(dev)};
  c10d::AllreduceOptions o;
  o.reduceOp = c10d::ReduceOp::MAX;
  comm.allreduce(t, o)->wait();
  const torch::Tensor host = t[0].cpu();
  auto a = host.accessor<double, 1>();
  std::vector<double> out(values.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = a[static_cast<int64_t>(i)];
  return out;
}

// Every rank's `values` (the same length on all), by rank.
std::vector<std::vector<double>> gather_all(Comm& comm, const std::vector<double>& values, const torch::Device& dev) {
  std::vector<torch::Tensor> in = {torch::tensor(values, torch::kDouble).to(dev)};
  std::vector<std::vector<torch::Tensor>> out(1);
  for (int r = 0; r < comm.getSize(); ++r) out[0].push_back(torch::empty_like(in[0]));
  comm.allgather(out, in)->wait();
  std::vector<std::vector<double>> all;
  for (const auto& d : out[0]) {
    const torch::Tensor t = d.cpu();
    all.emplace_back(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
  }
  return all;
}

// Each step's view as every rank sees it: the slowest step, the longest elapsed time, and dropped when
// any rank dropped it (its GPU clock was throttled), so all ranks keep and stop on the same steps.
class RankAgreement final : public StepAgreement {
 public:
  RankAgreement(Comm& comm, const torch::Device& dev) : comm_(comm), dev_(dev) {}
  StepView agree(const StepView& mine) override {
    const auto a = max_over_ranks(comm_, {mine.step_s, mine.elapsed_s, mine.kept ? 0.0 : 1.0}, dev_);
    return {a[0], a[1], a[2] == 0.0};
  }
  void before_measuring() override { comm_.barrier()->wait(); }  // start the clocks together

 private:
  Comm& comm_;
  torch::Device dev_;
};

// What each rank sends rank 0 at the end of a case; gathered as one vector of doubles per rank.
struct RankStats {
  double median_step_s = 0.0;
  double step_sum_s = 0.0;       // the kept steps together
  double exposed_sum_s = 0.0;    // time backward waited for all-reduces, over the kept steps
  double in_flight_sum_s = 0.0;  // time with an all-reduce in flight, over the kept steps (NaN: not measured)
  bool loss_finite = true;
  double params_checksum = 0.0;  // the replicas must still be one model
  std::vector<double> steps_s;   // this rank's kept step times, in order

  // After the steps: this rank's kept step times, their median and sum, whether its loss is finite,
  // and a checksum of its parameters weighted by their order.
  void finish(const std::vector<double>& kept_steps, const Workload& w) {
    steps_s = kept_steps;
    median_step_s = median_of(steps_s);
    for (double t : steps_s) step_sum_s += t;
    loss_finite = std::isfinite(w.last_loss());
    torch::NoGradGuard no_grad;
    double k = 1.0;
    for (const auto& p : w.trainable_parameters()) params_checksum += p.to(torch::kDouble).sum().item<double>() * k++;
  }

  std::vector<double> pack() const {
    std::vector<double> v = {median_step_s,           step_sum_s,     exposed_sum_s, in_flight_sum_s,
                             loss_finite ? 1.0 : 0.0, params_checksum};
    v.insert(v.end(), steps_s.begin(), steps_s.end());
    return v;
  }
  static RankStats unpack(const std::vector<double>& v) {
    RankStats s;
    s.median_step_s = v.at(0);
    s.step_sum_s = v.at(1);
    s.exposed_sum_s = v.at(2);
    s.in_flight_sum_s = v.at(3);
    s.loss_finite = v.at(4) != 0.0;
    s.params_checksum = v.at(5);
    s.steps_s.assign(v.begin() + 6, v.end());
    return s;
  }
};

// Builds this rank's workload for `local` (its device set current, the same initial weights as every
// rank's); the failure when it could not, to be agreed on by all ranks.
std::optional<Failure> set_up_rank(const Case& local, std::optional<memory::StepMemoryMeter>& meter,
                                   std::unique_ptr<Workload>& w) {
  try {
    set_current_device(local.device);  // for NCCL's communicators
    if (local.forward_only) throw std::invalid_argument("--dist times training; forward-only cases have no gradients");
    torch::manual_seed(0);  // the same initial weights everywhere (rank 0's are broadcast anyway)
    reset_peak_memory(local.device);
    meter.emplace(local.device);
    w = make_workload(local);
    meter->after_build(*w);
    if (w->trainable_parameters().empty()) throw std::invalid_argument("this workload cannot train data-parallel");
  } catch (...) {
    return current_failure();
  }
  return std::nullopt;
}

// Every rank's end-of-case stats as one DistInfo (world size, per-rank step times and waits, the
// shares of exposed and in-flight communication) and the slowest rank. Throws when a rank's loss is
// not finite or its parameters left rank 0's.
DistInfo combine_ranks(const std::vector<RankStats>& all, int* slowest_rank) {
  DistInfo d;
  d.world_size = static_cast<int>(all.size());
  d.single_process_throughput = std::numeric_limits<double>::quiet_NaN();
  d.scaling_efficiency = std::numeric_limits<double>::quiet_NaN();
  double total_step = 0.0, total_exposed = 0.0, total_in_flight = 0.0;
  *slowest_rank = 0;
  const double reference = all[0].params_checksum;
  for (size_t k = 0; k < all.size(); ++k) {
    const RankStats& s = all[k];
    if (!s.loss_finite)
      throw std::runtime_error("training diverged on rank " + std::to_string(k) + ": the loss is not finite");
    // Bitwise equal with Gloo; a tolerance leaves room for a backend whose ranks round differently.
    if (!(std::abs(s.params_checksum - reference) <= 1e-6 * std::max(1.0, std::abs(reference)))) {
      throw std::runtime_error("the replicas diverged: rank " + std::to_string(k) +
                               "'s parameters differ from rank 0's");
    }
    d.rank_step_time_s.push_back(s.median_step_s);
    d.rank_comm_share.push_back(s.step_sum_s > 0 ? s.exposed_sum_s / s.step_sum_s : 0.0);
    total_step += s.step_sum_s;
    total_exposed += s.exposed_sum_s;
    total_in_flight += s.in_flight_sum_s;
    if (s.median_step_s > all[static_cast<size_t>(*slowest_rank)].median_step_s) *slowest_rank = static_cast<int>(k);
  }
  d.comm_share = total_step > 0 ? total_exposed / total_step : 0.0;
  d.comm_total_share = total_step > 0 ? total_in_flight / total_step : 0.0;
  return d;
}

}  // namespace

Record measure_dist_case(const Case& c, const MeasureSettings& m, const CommPtr& comm, const DistEnv& e,
                         const std::string& backend, int64_t bucket_bytes) {
  Record r = case_record(c);
  r.threads = at::get_num_threads();
  const int world = comm->getSize();
  std::optional<memory::StepMemoryMeter> meter;  // outlives the workload it observes
  std::unique_ptr<Workload> w;
  std::unique_ptr<GradientAllreducer> reducer;
  Case local = c;
  if (local.device.is_gpu()) local.device.index = e.local_rank;  // one GPU per local rank
  local.data_seed = 1000 + e.rank;
  const torch::Device dev = torch_device(local.device);

  // Set-up, then agree that every rank managed it.
  const std::optional<Failure> setup_failure = set_up_rank(local, meter, w);
  try {
    const double failed = max_over_ranks(*comm, {setup_failure ? 1.0 : 0.0}, dev)[0];
    if (failed > 0) {
      r.status = setup_failure ? status_of(*setup_failure) : Status::error;
      r.error = setup_failure ? setup_failure->line : "another rank failed to set up this case";
      return r;
    }
    const double ranks = e.rank == 0 ? static_cast<double>(world) : 1.0;  // rank 0 reports the whole job
    fill_workload_facts(r, *w, local.device, ranks);
    std::vector<torch::Tensor> state = w->trainable_parameters();
    for (auto& b : w->model_buffers()) state.push_back(b);
    broadcast_from_rank0(*comm, state);
    reducer = std::make_unique<GradientAllreducer>(comm, w->trainable_parameters(), bucket_bytes);
    meter->add_comm_buffers(reducer->bucket_bytes());
    w->set_gradient_sync(reducer.get());

    RankAgreement agreement(*comm, dev);
    RankStats mine;
    const int64_t skipped_before = w->skipped_steps();
    const SampledSteps sampled = sample_steps(*w, local.device, m, &agreement, [&](bool kept) {
      if (!kept) return;
      mine.exposed_sum_s += reducer->last_exposed_s();
      mine.in_flight_sum_s += reducer->last_comm_s();
    });
    w->set_gradient_sync(nullptr);

    mine.finish(sampled.own, *w);
    // Every rank ran the same number of steps (agreement), so the packed vectors have one length.
    std::vector<RankStats> all;
    for (const auto& v : gather_all(*comm, mine.pack(), dev)) all.push_back(RankStats::unpack(v));

    int slowest_rank = 0;
    DistInfo d = combine_ranks(all, &slowest_rank);
    d.backend = backend;
    d.bucket_bytes = bucket_bytes;
    d.buckets = static_cast<int64_t>(reducer->bucket_count());

    // Rank 0 reports the slowest rank's steps; the others their own.
    const RankStats& pick = all[static_cast<size_t>(e.rank == 0 ? slowest_rank : e.rank)];
    // --data: this rank's own loader and waits (each rank reads its own shuffle: data_seed differs).
    fill_measured(r, *w, sampled, pick.steps_s, m, skipped_before, ranks);
    r.dist = d;
    r.status = Status::ok;
  } catch (...) {
    set_failure(r, current_failure());
  }
  if (w) w->set_gradient_sync(nullptr);
  r.peak_memory_bytes = peak_memory_bytes(local.device);
  r.peak_reserved_bytes = peak_reserved_bytes(local.device);
  if (meter) r.memory = meter->finish(c.batch);  // this rank's own: every rank holds the same
  return r;
}

}  // namespace trainbench::dist
