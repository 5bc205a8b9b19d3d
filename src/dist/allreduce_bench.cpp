#include "dist/allreduce_bench.h"

#include <fmt/format.h>

#include <chrono>

#include "dist/env.h"
#include "cases/case.h"

namespace trainbench::dist {
namespace {

constexpr const char* kPrefix = "allreduce:";

[[noreturn]] void bad(const std::string& input, size_t at, const std::string& why) {
  throw DescriptorError("bad all-reduce descriptor '" + input + "': " + why + " (at column " + std::to_string(at + 1) +
                        ")");
}

}  // namespace

std::string AllreduceCase::descriptor() const {
  std::string size;
  if (floats >= 1'000'000 && floats % 1'000'000 == 0) {
    size = std::to_string(floats / 1'000'000) + "M";
  } else if (floats >= 1'000'000 && floats % 100'000 == 0) {
    size = std::to_string(floats / 1'000'000) + "." + std::to_string(floats % 1'000'000 / 100'000) + "M";
  } else if (floats >= 1'000 && floats % 1'000 == 0) {
    size = std::to_string(floats / 1'000) + "K";
  } else {
    size = std::to_string(floats);
  }
  return kPrefix + size;
}

AllreduceCase parse_allreduce(const std::string& d) {
  const std::string prefix = kPrefix;
  if (d.rfind(prefix, 0) != 0) bad(d, 0, "expected allreduce:SIZE (SIZE in floats, e.g. allreduce:64.5M)");
  const std::string s = d.substr(prefix.size());
  const size_t at = prefix.size();
  if (s.empty()) bad(d, at, "missing SIZE (floats, e.g. 100K, 64.5M, 3097600)");
  int64_t scale = 1;
  std::string digits = s;
  if (s.back() == 'K' || s.back() == 'M') {
    scale = s.back() == 'K' ? 1'000 : 1'000'000;
    digits = s.substr(0, s.size() - 1);
  }
  const auto dot = digits.find('.');
  const std::string whole = digits.substr(0, dot);
  const std::string frac = dot == std::string::npos ? "" : digits.substr(dot + 1);
  auto all_digits = [](const std::string& x) {
    return !x.empty() && x.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!all_digits(whole) || (dot != std::string::npos && !all_digits(frac)) || whole.size() > 12) {
    bad(d, at, "SIZE '" + s + "' is not a count of floats (digits, optionally with K or M)");
  }
  if (dot != std::string::npos && scale == 1) bad(d, at + dot, "a fraction needs a K or M suffix");
  int64_t frac_value = 0, frac_scale = scale;
  for (char ch : frac) {
    frac_scale /= 10;
    if (frac_scale == 0) bad(d, at + dot, "SIZE '" + s + "' is not a whole number of floats");
    frac_value += (ch - '0') * frac_scale;
  }
  const int64_t floats = std::stoll(whole) * scale + frac_value;
  if (floats <= 0) bad(d, at, "SIZE must be at least 1 float");
  if (floats > (int64_t{1} << 36)) bad(d, at, "SIZE '" + s + "' is over 2^36 floats");
  return AllreduceCase{floats};
}

const std::vector<int64_t>& deepbench_allreduce_sizes() {
  static const std::vector<int64_t> v = {100'000, 3'097'600, 4'194'304, 6'553'600, 16'777'217, 38'360'000, 64'500'000};
  return v;
}

AllreduceResult benchmark_allreduce(Comm& comm, int64_t floats, const MeasureSettings& m, const DeviceSpec& device) {
  using Clock = std::chrono::steady_clock;
  AllreduceResult r;
  r.floats = floats;
  r.bytes = floats * 4;
  r.world_size = comm.getSize();
  r.backend = comm.getBackendName();
  std::vector<torch::Tensor> buf = {torch::ones({floats}, torch::TensorOptions().device(torch_device(device)))};
  auto once = [&] {
    comm.allreduce(buf)->wait();
    synchronize(device);
  };
  for (long i = 0; i < std::max<long>(1, m.warmup_steps); ++i) once();
  comm.barrier()->wait();
  StoppingPolicy policy = m.policy();
  const auto start = Clock::now();
  while (true) {
    const auto t0 = Clock::now();
    once();
    const auto t1 = Clock::now();
    // Agree (untimed) on the slowest rank's time and the elapsed time, so every rank stops together.
    std::vector<torch::Tensor> agree = {torch::tensor({std::chrono::duration<double>(t1 - t0).count(),
                                                       std::chrono::duration<double>(t1 - start).count()},
                                                      torch::kDouble)
                                            .to(torch_device(device))};  // NCCL reduces device memory only
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::MAX;
    comm.allreduce(agree, o)->wait();
    const torch::Tensor agreed = agree[0].cpu();
    r.samples_s.push_back(agreed[0].item<double>());
    if (policy.done({r.samples_s, agreed[1].item<double>()})) break;
  }
  r.time_s = summarize(r.samples_s);
  r.algbw_gbs = static_cast<double>(r.bytes) / r.time_s.median / 1e9;
  const double n = static_cast<double>(r.world_size);
  r.busbw_gbs = r.algbw_gbs * 2.0 * (n - 1.0) / n;
  return r;
}

AllreduceRun run_allreduce_benchmark(const std::vector<int64_t>& sizes, const MeasureSettings& m,
                                     const DistSettings& s) {
  const DistEnv e = dist_env_from_process();
  const bool gpu = s.backend == "nccl";
  const std::string backend = resolve_backend(s.backend, gpu);
  DeviceSpec device;
  if (gpu) {  // one GPU per local rank, current before NCCL sets up its communicator
    device = gpu_device(e.local_rank);
    set_current_device(device);
  }
  StorePtr store = connect_store(e, e.rank == 0, s.timeout_s);
  CommPtr comm = make_comm(prefixed("trainbench/allreduce/", store), e, backend, s.timeout_s);
  AllreduceRun run;
  run.rank = e.rank;
  for (int64_t n : sizes) run.results.push_back(benchmark_allreduce(*comm, n, m, device));
  comm->barrier()->wait();  // rank 0 hosts the store: leave together
  return run;
}

std::string allreduce_table(const std::vector<AllreduceResult>& results) {
  std::string out = fmt::format("{:<22} {:>12} {:>6} {:>8} {:>12} {:>10} {:>10}\n", "case", "bytes", "ranks", "backend",
                                "median ms", "algbw GB/s", "busbw GB/s");
  for (const auto& r : results) {
    out +=
        fmt::format("{:<22} {:>12} {:>6} {:>8} {:>12.3f} {:>10.3f} {:>10.3f}\n", AllreduceCase{r.floats}.descriptor(),
                    r.bytes, r.world_size, r.backend, r.time_s.median * 1e3, r.algbw_gbs, r.busbw_gbs);
  }
  return out;
}

}  // namespace trainbench::dist
