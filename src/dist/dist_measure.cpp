#include "dist/dist_measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "core/device.h"
#include "dist/grad_allreduce.h"
#include "runner/measure.h"
#include "workloads/workload.h"

namespace trainbench::dist {
namespace {

using Clock = std::chrono::steady_clock;

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

std::string failure_text(const std::exception& e, Status* status) {
  const auto* c10 = dynamic_cast<const c10::Error*>(&e);
  const std::string what = c10 ? c10->what_without_backtrace() : e.what();
  *status = is_out_of_memory_message(what) ? Status::oom : Status::error;
  return first_line(what);
}

}  // namespace

Record measure_dist_case(const Case& c, const MeasureSettings& m, const CommPtr& comm, const DistEnv& e,
                         const std::string& backend, int64_t bucket_bytes) {
  Record r = case_record(c);
  r.threads = at::get_num_threads();
  const int world = comm->getSize();
  std::unique_ptr<Workload> w;
  std::unique_ptr<GradientAllreducer> reducer;
  Case local = c;
  if (local.device.is_gpu()) local.device.index = e.local_rank;  // one GPU per local rank
  local.data_seed = 1000 + e.rank;
  const torch::Device dev = local.device.torch_device();

  // Set-up, then agree that every rank managed it.
  std::string setup_error;
  Status setup_status = Status::error;
  try {
    if (local.device.is_gpu()) {
      // The current device, for NCCL's communicators: through the device-generic interface, which
      // CUDA and ROCm (HIP answers as CUDA) builds register and a CPU build needs no header for.
      c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)
          ->setDevice(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(e.local_rank)));
    }
    if (c.forward_only) throw std::invalid_argument("--dist times training; forward-only cases have no gradients");
    torch::manual_seed(0);  // the same initial weights everywhere (rank 0's are broadcast anyway)
    reset_peak_memory(local.device);
    w = make_workload(local);
    if (w->trainable_parameters().empty()) throw std::invalid_argument("this workload cannot train data-parallel");
  } catch (const std::bad_alloc&) {
    setup_status = Status::oom;
    setup_error = "out of memory (std::bad_alloc)";
  } catch (const std::exception& ex) {
    setup_error = failure_text(ex, &setup_status);
  }
  try {
    const double failed = max_over_ranks(*comm, {setup_error.empty() ? 0.0 : 1.0}, dev)[0];
    if (failed > 0) {
      r.status = setup_status;
      r.error = !setup_error.empty() ? setup_error : "another rank failed to set up this case";
      return r;
    }
    r.parameters = w->parameters();
    r.unit = w->unit();
    std::vector<torch::Tensor> state = w->trainable_parameters();
    for (auto& b : w->model_buffers()) state.push_back(b);
    broadcast_from_rank0(*comm, state);
    reducer = std::make_unique<GradientAllreducer>(comm, w->trainable_parameters(), bucket_bytes);
    w->set_gradient_sync(reducer.get());

    const auto warm_start = Clock::now();
    for (long i = 0; i < m.warmup_steps; ++i) w->step();
    synchronize(local.device);
    r.warmup_steps = m.warmup_steps;
    r.warmup_time_s = std::chrono::duration<double>(Clock::now() - warm_start).count();
    comm->barrier()->wait();  // start the clocks together

    StoppingPolicy policy = m.policy();
    std::vector<double> mine, slowest, exposed, in_flight;
    const auto start = Clock::now();
    while (true) {
      const auto t0 = Clock::now();
      w->step();
      synchronize(local.device);
      const auto t1 = Clock::now();
      mine.push_back(std::chrono::duration<double>(t1 - t0).count());
      exposed.push_back(reducer->last_exposed_s());
      in_flight.push_back(reducer->last_comm_s());
      // Not timed: the ranks agree on what the stopping rule sees, so all stop after the same step.
      const auto agreed = max_over_ranks(*comm, {mine.back(), std::chrono::duration<double>(t1 - start).count()}, dev);
      slowest.push_back(agreed[0]);
      if (policy.done({slowest, agreed[1]})) break;
    }
    w->set_gradient_sync(nullptr);

    const double loss = w->last_loss();
    const Summary own = summarize(mine);
    double step_sum = 0.0, exposed_sum = 0.0, in_flight_sum = 0.0;  // NaN in_flight: not measured
    for (size_t i = 0; i < mine.size(); ++i) {
      step_sum += mine[i];
      exposed_sum += exposed[i];
      in_flight_sum += in_flight[i];
    }
    // The replicas must still be one model: every rank applied the same averaged gradients.
    double params_checksum = 0.0;
    {
      torch::NoGradGuard no_grad;
      double k = 1.0;
      for (const auto& p : w->trainable_parameters()) params_checksum += p.to(torch::kDouble).sum().item<double>() * k++;
    }
    std::vector<double> mine_stats = {own.median, step_sum, exposed_sum, std::isfinite(loss) ? 1.0 : 0.0,
                                      params_checksum, in_flight_sum};
    constexpr size_t kStats = 6;  // then the step times
    mine_stats.insert(mine_stats.end(), mine.begin(), mine.end());
    const auto all = gather_all(*comm, mine_stats, dev);

    DistInfo d;
    d.world_size = world;
    d.backend = backend;
    d.bucket_bytes = bucket_bytes;
    d.buckets = static_cast<int64_t>(reducer->bucket_count());
    d.single_process_throughput = std::numeric_limits<double>::quiet_NaN();
    d.scaling_efficiency = std::numeric_limits<double>::quiet_NaN();
    double total_step = 0.0, total_exposed = 0.0, total_in_flight = 0.0;
    int slowest_rank = 0;
    for (int k = 0; k < world; ++k) {
      const auto& s = all[static_cast<size_t>(k)];
      if (s[3] == 0.0) throw std::runtime_error("training diverged on rank " + std::to_string(k) + ": the loss is not finite");
      // Bitwise equal with Gloo; a tolerance leaves room for a backend whose ranks round differently.
      if (!(std::abs(s[4] - all[0][4]) <= 1e-6 * std::max(1.0, std::abs(all[0][4])))) {
        throw std::runtime_error("the replicas diverged: rank " + std::to_string(k) + "'s parameters differ from rank 0's");
      }
      d.rank_step_time_s.push_back(s[0]);
      d.rank_comm_share.push_back(s[1] > 0 ? s[2] / s[1] : 0.0);
      total_step += s[1];
      total_exposed += s[2];
      total_in_flight += s[5];
      if (s[0] > all[static_cast<size_t>(slowest_rank)][0]) slowest_rank = k;
    }
    d.comm_share = total_step > 0 ? total_exposed / total_step : 0.0;
    d.comm_total_share = total_step > 0 ? total_in_flight / total_step : 0.0;

    // Rank 0 reports the slowest rank's steps; the others their own.
    const auto& pick = e.rank == 0 ? all[static_cast<size_t>(slowest_rank)] : all[static_cast<size_t>(e.rank)];
    r.samples_s.assign(pick.begin() + kStats, pick.end());
    r.step_time_s = summarize(r.samples_s);
    r.stop_reason = policy.reason();
    const double ranks = e.rank == 0 ? static_cast<double>(world) : 1.0;
    r.throughput = ranks * static_cast<double>(w->samples_per_step()) / r.step_time_s.median;
    r.tokens_per_s = ranks * static_cast<double>(w->tokens_per_step()) / r.step_time_s.median;
    r.flops_per_step = ranks * w->flops_per_step();
    r.achieved_gflops = r.flops_per_step / r.step_time_s.median / 1e9;
    r.peak_memory_bytes = peak_memory_bytes(local.device);
    r.dist = d;
    r.status = Status::ok;
  } catch (const std::bad_alloc&) {
    r.status = Status::oom;
    r.error = "out of memory (std::bad_alloc)";
  } catch (const std::exception& ex) {
    r.error = failure_text(ex, &r.status);
  }
  if (w) w->set_gradient_sync(nullptr);
  if (r.status != Status::ok) r.peak_memory_bytes = peak_memory_bytes(local.device);
  return r;
}

}  // namespace trainbench::dist
