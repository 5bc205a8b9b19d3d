#include "runner/measure.h"

#include <malloc.h>

#include <chrono>
#include <cmath>
#include <new>

#include "core/address_space.h"
#include "core/device.h"
#include "data/decode_crop.h"
#include "data/verdict.h"
#include "memory/probe.h"
#include "memory/step_memory.h"
#include "runner/step_sampler.h"
#include "workloads/registry.h"
#include "workloads/script.h"

namespace trainbench {

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
  r.precision = c.precision.str();
  r.layout = to_string(c.layout);
  r.optimizer = c.optimizer;
  r.forward_only = c.forward_only;
  r.threads = c.threads;
  if (const auto digest = script_file_digest(c.model, c.params)) {
    r.model_file_bytes = digest->bytes;
    r.model_file_sha256 = digest->sha256;
  }
  return r;
}

Record failed_record(const Case& c, const std::string& why) {
  Record r = case_record(c);
  r.status = Status::error;
  r.error = why;
  return r;
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
  if (s.max_image_pixels > 0) data::set_max_image_pixels(s.max_image_pixels);
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
    // An intra-op (OpenMP) worker sets up its thread count the first time an operator asks for it
    // there, and LibTorch 1.13 then rebuilds its pthreadpool from that worker. Done first under a
    // memory limit, that hung: mobilenet_v2 under 700M waited forever in adaptive_avg_pool2d's mean,
    // its worker parked in pthreadpool_create. A parallel reduction (the mean over a map's height and
    // width, and a whole-tensor sum) starts the workers and makes each ask, here, before the limit.
    auto maps = torch::ones({4, 64, 32, 32});
    (void)maps.mean({2, 3}).sum().item<float>();
    (void)maps.sum().item<float>();
  }
  // RLIMIT_AS would also cap a GPU runtime's huge virtual mappings: a CPU case's limit is its address
  // space, a GPU case's what the caching allocator may reserve on the card.
  memory::mark_case_start();  // the memory limit and the recorded footprint count from here
  if (s.memory_limit_bytes > 0 && !c.device.is_gpu()) limit_address_space(s.memory_limit_bytes);
  if (s.memory_limit_bytes > 0 && s.memory_limit_on_gpu && c.device.is_gpu()) {
    const std::string why_not = limit_gpu_memory(c.device, s.memory_limit_bytes);
    if (!why_not.empty()) throw std::runtime_error("--memory-limit: " + why_not);
  }
  return threads;
}

void fill_workload_facts(Record& r, const Workload& w, const DeviceSpec& device, double ranks) {
  r.parameters = w.parameters();
  r.unit = w.unit();
  r.flops_per_step = ranks * w.flops_per_step();
  r.model_flops_per_step = ranks * w.model_flops_per_step();
  r.hardware_flops_per_step = ranks * w.hardware_flops_per_step();
  r.tf32 = tf32_mode(device);
  r.algorithm_search = algorithm_search_mode(device);
}

void fill_measured(Record& r, const Workload& w, const SampledSteps& sampled, const std::vector<double>& steps,
                   const MeasureSettings& m, int64_t skipped_before, double ranks) {
  r.skipped_steps = w.skipped_steps() - skipped_before;
  r.loss_scale = w.loss_scale();
  fill_timing(r, steps, sampled, m);
  if (const auto stats = w.loader_stats()) {
    r.data = data::make_data_info(*stats, sampled.own, sampled.data_wait, w.samples_per_step(), sampled.copy_wait);
  }
  r.throughput = ranks * static_cast<double>(w.samples_per_step()) / r.step_time_s.median;
  r.tokens_per_s = ranks * static_cast<double>(w.tokens_per_step()) / r.step_time_s.median;
  r.achieved_gflops = r.flops_per_step / r.step_time_s.median / 1e9;
}

Record measure_case(const Case& c, const MeasureSettings& m) {
  return measure_workload(c, m, [&] { return make_workload(c); });
}

Record measure_workload(const Case& c, const MeasureSettings& m,
                        const std::function<std::unique_ptr<Workload>()>& build) {
  Record r = case_record(c);
  r.threads = at::get_num_threads();
  std::optional<memory::StepMemoryMeter> meter;
  try {
    torch::manual_seed(0);
    reset_peak_memory(c.device);
    meter.emplace(c.device);
    std::unique_ptr<Workload> w = build();
    meter->after_build(*w);
    fill_workload_facts(r, *w, c.device);

    const int64_t skipped_before = w->skipped_steps();
    const SampledSteps s = sample_steps(*w, c.device, m);
    if (!c.forward_only && !std::isfinite(w->last_loss())) {
      throw std::runtime_error("training diverged: the loss is not finite");
    }
    fill_measured(r, *w, s, s.own, m, skipped_before);
    r.status = Status::ok;
  } catch (...) {
    set_failure(r, current_failure());
  }
  r.peak_memory_bytes = peak_memory_bytes(c.device);
  r.peak_reserved_bytes = peak_reserved_bytes(c.device);
  if (meter) r.memory = meter->finish(c.batch);
  return r;
}

}  // namespace trainbench
