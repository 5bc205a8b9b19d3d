#include "runner/measure.h"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <new>

#include "core/device.h"
#include "core/energy.h"
#include "core/gpu_clock.h"
#include "workloads/registry.h"

namespace trainbench {
namespace {

using Clock = std::chrono::steady_clock;

int64_t current_address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  statm >> pages;
  return pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

Record case_record(const Case& c) {
  Record r;
  r.name = c.descriptor();
  r.model = c.model;
  // Every parameter, defaults included, so a reader needs no registry; the descriptor (name) keeps
  // the canonical short form.
  const WorkloadInfo* w = find_workload(c.model);
  r.params = w != nullptr ? effective_params(*w, c.params) : c.params;
  r.batch_size = c.batch;
  r.device = c.device.str();
  r.precision = c.precision;
  r.layout = c.layout;
  r.optimizer = c.optimizer;
  r.forward_only = c.forward_only;
  r.threads = c.threads;
  return r;
}

Record failed_record(const Case& c, const std::string& why) {
  Record r = case_record(c);
  r.status = Status::error;
  r.error = why;
  return r;
}

std::string first_line(const std::string& what) {
  std::string line = what.substr(0, what.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line.empty() ? "unknown failure" : line;
}

bool is_out_of_memory_message(const std::string& what) {
  static const char* const kMarks[] = {"can't allocate memory", "not enough memory", "out of memory",
                                       "OutOfMemory", "std::bad_alloc", "Cannot allocate memory",
                                       "could not allocate", "hipErrorOutOfMemory", "CUBLAS_STATUS_ALLOC_FAILED"};
  for (const char* m : kMarks) {
    if (what.find(m) != std::string::npos) return true;
  }
  return false;
}

int prepare_child_process(const Case& c, const ChildSettings& s) {
  if (s.tune_allocator) {
    // Training frees and re-allocates the same large activations every step. glibc would hand each
    // one back to the kernel (mmap/munmap) and fault fresh zeroed pages in next step; keeping them in
    // the heap measures the model, not the page-fault path (the effect PyTorch's CPU tuning guide gets
    // from jemalloc/tcmalloc).
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, -1);  // never trim: -1 converts to the largest size
    mallopt(M_TOP_PAD, 64 << 20);
  }
  const int threads = configure_threads(c.threads > 0 ? c.threads : s.default_threads);
  configure_gpu_math(c.device, s.tf32);
  // Start the thread pools (OpenMP, BLAS) before any memory limit: a failed thread creation under
  // RLIMIT_AS would abort the process instead of raising a catchable allocation error.
  {
    torch::NoGradGuard no_grad;
    auto a = torch::randn({64, 64});
    auto b = torch::mm(a, a);
    auto x = torch::randn({2, 8, 16, 16});
    auto w = torch::randn({8, 8, 3, 3});
    auto y = torch::conv2d(x, w, {}, 1, 1);
    (void)b.sum().item<float>();
    (void)y.sum().item<float>();
  }
  // RLIMIT_AS would also cap a GPU runtime's huge virtual mappings: the limit is for CPU cases only.
  if (s.memory_limit_bytes > 0 && !c.device.is_gpu()) {
    struct rlimit lim {};
    lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(current_address_space_bytes() + s.memory_limit_bytes);
    setrlimit(RLIMIT_AS, &lim);
  }
  return threads;
}

Record measure_case(const Case& c, const MeasureSettings& m) {
  Record r = case_record(c);
  r.threads = at::get_num_threads();
  try {
    torch::manual_seed(0);
    reset_peak_memory(c.device);
    std::unique_ptr<Workload> w = make_workload(c);
    r.parameters = w->parameters();
    r.flops_per_step = w->flops_per_step();
    r.unit = w->unit();

    r.tf32 = tf32_mode(c.device);
    r.algorithm_search = algorithm_search_mode(c.device);

    // Warm-up: a fixed count on CPU; on a GPU until step times settle (algorithm search, see WarmupRule).
    const WarmupRule warmup = m.warmup(c.device.is_gpu());
    std::vector<double> warm;
    const auto warm_start = Clock::now();
    while (!warmup.done({warm, std::chrono::duration<double>(Clock::now() - warm_start).count()})) {
      const auto t0 = Clock::now();
      w->step();
      synchronize(c.device);
      warm.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    r.warmup_steps = static_cast<long>(warm.size());
    r.warmup_time_s = std::chrono::duration<double>(Clock::now() - warm_start).count();

    // Throttling: a step whose SM clock, read right after it, is under 75% of the default is dropped.
    const auto clock = SmClockReader::for_device(c.device);
    ClockFilter filter(clock->default_mhz());
    const int64_t skipped_before = w->skipped_steps();
    StoppingPolicy policy = m.policy();
    std::vector<double> samples;
    samples.reserve(1024);
    EnergyMeter energy = EnergyMeter::for_device(c.device);
    energy.start();  // the measured steps only: warm-up and model build are outside
    const auto start = Clock::now();
    while (true) {
      const auto t0 = Clock::now();
      w->step();
      synchronize(c.device);
      const auto t1 = Clock::now();
      if (filter.keep(clock->read())) samples.push_back(std::chrono::duration<double>(t1 - t0).count());
      if (policy.done({samples, std::chrono::duration<double>(Clock::now() - start).count()})) break;
    }
    energy.stop();
    r.throttled_samples = filter.dropped();
    if (const auto mhz = filter.mean_kept_mhz()) r.mean_sm_clock_mhz = *mhz;
    r.skipped_steps = w->skipped_steps() - skipped_before;
    r.loss_scale = w->loss_scale();
    // Throttled steps ran inside the energy window: their samples count, so J/sample is per sample trained.
    if (const auto e = energy.figures((static_cast<int64_t>(samples.size()) + r.throttled_samples) * w->samples_per_step())) {
      r.energy_j_per_sample = e->j_per_sample;
      r.mean_power_w = e->mean_power_w;
      r.energy_source = e->source;
    }
    if (samples.empty()) {
      throw std::runtime_error("every measured step ran with the GPU clock throttled (" +
                               std::to_string(r.throttled_samples) + " dropped)");
    }
    const double loss = w->last_loss();
    if (!c.forward_only && !std::isfinite(loss)) {
      throw std::runtime_error("training diverged: the loss is not finite");
    }

    r.samples_s = samples;
    r.step_time_s = summarize(samples);
    r.stop_reason = policy.reason();
    r.throughput = static_cast<double>(w->samples_per_step()) / r.step_time_s.median;
    r.tokens_per_s = static_cast<double>(w->tokens_per_step()) / r.step_time_s.median;
    r.achieved_gflops = r.flops_per_step / r.step_time_s.median / 1e9;
    r.peak_memory_bytes = peak_memory_bytes(c.device);
    r.peak_reserved_bytes = peak_reserved_bytes(c.device);
    r.status = Status::ok;
  } catch (const std::bad_alloc&) {
    r.status = Status::oom;
    r.error = "out of memory (std::bad_alloc)";
  } catch (const c10::OutOfMemoryError& e) {
    // The caching allocator's type (LibTorch 1.13 and 2.x); other GPU allocation failures (cuBLAS
    // workspace, HIP) arrive as plain c10::Error and are told apart by their message below.
    r.status = Status::oom;
    r.error = first_line(e.what_without_backtrace());
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    r.status = is_out_of_memory_message(what) ? Status::oom : Status::error;
    r.error = first_line(what);
  } catch (const std::exception& e) {
    r.status = is_out_of_memory_message(e.what()) ? Status::oom : Status::error;
    r.error = first_line(e.what());
  }
  if (r.status != Status::ok) {
    r.peak_memory_bytes = peak_memory_bytes(c.device);
    r.peak_reserved_bytes = peak_reserved_bytes(c.device);
  }
  return r;
}

}  // namespace trainbench
