// The flag groups several subcommands share: each flag is declared here once, with one help text.
#include "cli/options.h"
#include "cli/shared_flags.h"
#include "core/subprocess.h"
#include "runner/plan.h"
#include "workloads/script.h"

namespace trainbench::cli {

void trial_defaults(MeasureFlags& m) {
  m.stop.warmup_steps = 1;
  m.stop.warmup_fixed = true;
  m.stop.min_steps = 2;
  m.stop.min_time_s = 0.0;
  m.stop.max_time_s = 10.0;
  m.system_allocator = true;
}

void check_limit_conflicts(const MeasureFlags& m) {
  for (const StopSetting& most : stop_settings()) {
    if (most.at_least == nullptr) continue;
    const StopSetting& least = stop_setting(most.at_least);
    const auto given_least = m.given.find(least.name), given_most = m.given.find(most.name);
    // A floor no limit cuts (--min-steps): a maximum under its default is a conflict too.
    const bool both = given_least != m.given.end() && given_most != m.given.end();
    const bool either = given_least != m.given.end() || given_most != m.given.end();
    if (!(both || (least.floor && either)) || least.get(m.stop) <= most.get(m.stop)) continue;
    const auto name = [&](const StopSetting& s, const auto& it) {
      return it != m.given.end() ? it->second : stop_flag(s) + " (default)";
    };
    throw InputError(fmt::format("{} {} is above {} {}", name(least, given_least), stop_value_text(least, m.stop),
                                 name(most, given_most), stop_value_text(most, m.stop)));
  }
}

void MeasureFlags::add_to(CLI::App& app) {
  for (const StopSetting& s : stop_settings()) {
    add_stop_setting(app, s, [this, &s](double v) {
      s.set(stop, v);
      given[s.name] = stop_flag(s);
    });
  }
  app.add_option("--timeout", timeout_s, "Kill a case after this many seconds of wall time (0: never)")
      ->check(rule(kSeconds));
  add_memory_limit(app, memory_limit,
                   "Memory a case may take (e.g. 4G): a CPU case's address space, a GPU case's caching allocator (the "
                   "runtime's context outside it); beyond it: oom");
  app.add_flag("--memory-limit-cpu-only", memory_limit_cpu_only)->group("");  // a suite's limit, to children
  add_max_image_pixels(app, max_image_pixels, "--data images");
  // One value, two spellings: --allocator names it, --system-allocator is --allocator system.
  CLI::Option* allocator = app.add_option_function<std::string>(
                                  "--allocator", [this](const std::string& a) { system_allocator = a == "system"; },
                                  fmt::format("CPU heap: tuned (freed activations stay in the heap between steps) or "
                                              "system (glibc malloc as is); default {}",
                                              system_allocator ? "system" : "tuned"))
                               ->check(CLI::IsMember({"tuned", "system"}));
  add_system_allocator(app, system_allocator, "As --allocator system")->excludes(allocator);
  add_tf32(app, tf32, "GPU: on lets cuBLAS and cuDNN use TF32 for fp32 math; off (default) keeps fp32")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--auto-threads", auto_threads)->group("");  // set by `run --dist` for its children
}

void DistFlags::add_to(CLI::App& app) {
  app.add_flag("--dist", enabled,
               "Data-parallel: this process is one rank (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; see `launch`)");
  app.add_option("--dist-backend", backend, "c10d backend: auto (gloo on CPU, nccl on GPU), gloo, nccl")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  app.add_option("--dist-timeout", timeout_s, "Seconds a rendezvous or collective may wait before failing")
      ->check(rule(kSecondsPositive));
  app.add_option("--bucket-mb", bucket_mb, "Gradient all-reduce bucket size, MiB (as DDP's bucket_cap_mb)")
      ->check(rule(kBucketMiB));
  app.add_flag("--no-baseline", no_baseline, "Skip the one-process run of each case (no scaling efficiency)");
}

void SweepFlags::add_to(CLI::App& app) {
  add_model(app, models, Many::list);
  add_device(app, devices, Many::list);
  add_precision(app, precisions, Many::list);
  add_layout(app, layouts, Many::list);
  add_optimizer(app, optimizers, Many::list);
  script.add_to(app);
  add_set(app, sets, Many::list);
  app.add_flag("--forward-only", forward_only, "Inference only: the forward pass, no backward or optimizer step");
}

Sweep SweepFlags::to_sweep() const {
  Sweep s;
  s.params = params_product(parse_sets(sets));
  // No --model: no models (make_plan says what is missing), unless --input/--target need one.
  if (!models.empty() || script.given()) s.models = sweep_models(models, script, s.params);
  s.precisions = split_list(precisions, "precision");
  s.layouts = split_list(layouts, "layout");
  s.optimizers = split_list(optimizers, "optimizer");
  if (!devices.empty()) s.devices = split_list(devices, "device");
  s.forward_only = forward_only;
  return s;
}

void InputDataFlags::add_to(CLI::App& app) {
  add_data(app, data,
           "Input data: synthetic (default: one batch on the device), a folder of JPEGs in ImageFolder "
           "layout (CNNs), or a token file (bert, bilstm)");
  add_data_dtype(app, data_dtype);
  add_data_transfer(app, data_transfer);
}

void InProcessFlags::add_to(CLI::App& app) {
  add_device(app, device, Many::one);
  add_threads(app, threads, "Intra-op threads (0: one per core)")->check(rule(kThreadCount));
}

}  // namespace trainbench::cli
