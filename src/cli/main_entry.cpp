#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "results/reporter.h"
#include "runner/plan.h"

namespace trainbench::cli {

int bad_input(const std::string& what) {
  std::cerr << "trainbench: error: " << what << std::endl;
  return kExitBadInput;
}

CLI::Validator rule(const NumberRule& r) {
  return CLI::Validator([r](std::string& text) { return number_text_problem(text, r); }, "", "number rule");
}

LimitNames limits_given(const CLI::App& sub) {
  auto given = [&](const char* flag) { return sub.count(flag) > 0 ? std::string(flag) : std::string(); };
  return {given("--min-steps"), given("--max-steps"), given("--min-time"), given("--max-time")};
}

void check_limit_conflicts(const MeasureFlags& m, const LimitNames& given) {
  // --min-steps is a floor no limit cuts, so a --max-steps under the default floor is a conflict too.
  if ((!given.min_steps.empty() || !given.max_steps.empty()) && m.min_steps > m.max_steps) {
    const std::string min_name = given.min_steps.empty() ? "--min-steps (default)" : given.min_steps;
    const std::string max_name = given.max_steps.empty() ? "--max-steps (default)" : given.max_steps;
    throw InputError(fmt::format("{} {} is above {} {}", min_name, m.min_steps, max_name, m.max_steps));
  }
  if (!given.min_time.empty() && !given.max_time.empty() && m.min_time_s > m.max_time_s) {
    throw InputError(fmt::format("{} {} is above {} {}", given.min_time, m.min_time_s, given.max_time, m.max_time_s));
  }
}

void MeasureFlags::add_to(CLI::App& app) {
  app.add_option("--warmup", warmup, "Warm-up steps before timing (not counted)")->check(rule(kWarmupSteps));
  app.add_option("--min-steps", min_steps, "Measure at least this many steps")->check(rule(kStepCount));
  app.add_option("--max-steps", max_steps, "Stop measuring a case after this many steps")->check(rule(kStepCount));
  app.add_option("--min-time", min_time_s, "Measure for at least this many seconds")->check(rule(kSeconds));
  app.add_option("--max-time", max_time_s, "Stop measuring a case after this many seconds")->check(rule(kSecondsPositive));
  app.add_option("--max-noise", max_noise_pct, "Stop once the median's relative noise is under PCT percent")
      ->check(rule(kNoisePercent));
  app.add_option("--timeout", timeout_s, "Kill a case after this many seconds of wall time (0: never)")
      ->check(rule(kSeconds));
  app.add_option("--memory-limit", memory_limit, "Memory a CPU case may allocate (e.g. 4G); beyond it: oom");
  app.add_flag("--system-allocator", system_allocator,
               "Leave glibc malloc untuned (by default freed activations stay in the heap between steps)");
  app.add_option("--tf32", tf32, "GPU: on lets cuBLAS and cuDNN use TF32 for fp32 math; off (default) keeps fp32")
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

std::vector<std::string> DistFlags::child_args(size_t case_index) const {
  return {"--dist", "--dist-backend", backend, "--dist-timeout", fmt::format("{}", timeout_s),
          "--bucket-mb", fmt::format("{}", bucket_mb), "--dist-key", std::to_string(case_index)};
}

ChildSettings MeasureFlags::resolve() const {
  ChildSettings s;
  s.measure.warmup_steps = warmup;
  s.measure.min_steps = min_steps;
  s.measure.max_steps = max_steps;
  s.measure.min_time_s = min_time_s;
  s.measure.max_time_s = max_time_s;
  s.measure.max_noise = max_noise_pct / 100.0;
  s.memory_limit_bytes = memory_limit.empty() ? 0 : parse_size(memory_limit, "memory limit");
  s.tune_allocator = !system_allocator;
  s.tf32 = tf32 == "on";
  s.default_threads = auto_threads;
  return s;
}

std::vector<std::string> MeasureFlags::child_args() const {
  std::vector<std::string> a = {"--warmup",    std::to_string(warmup),        "--min-steps", std::to_string(min_steps),
                                "--max-steps", std::to_string(max_steps),
                                "--min-time",  fmt::format("{}", min_time_s), "--max-time",  fmt::format("{}", max_time_s),
                                "--max-noise", fmt::format("{}", max_noise_pct)};
  if (!memory_limit.empty()) {
    a.push_back("--memory-limit");
    a.push_back(memory_limit);
  }
  if (system_allocator) a.push_back("--system-allocator");
  a.push_back("--tf32");
  a.push_back(tf32);
  if (auto_threads > 0) {
    a.push_back("--auto-threads");
    a.push_back(std::to_string(auto_threads));
  }
  return a;
}

int main_entry(int argc, char** argv) {
  CLI::App app{"trainbench: deep-learning training throughput on LibTorch"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(TRAINBENCH_VERSION) + " (" + TRAINBENCH_GIT_REVISION + ")");

  std::vector<std::string> list_models;
  CLI::App* list_cmd = app.add_subcommand(
      "list", "Models and suites with input shape, default batch, parameter count and FLOPs per sample");
  list_cmd->add_option("models", list_models, "Only these models (default: every model, then the suites)");

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "Measure training throughput of a sweep of cases");
  run_cmd->add_option("--model,-m", run.models, "Models, comma-separated (see `trainbench list`), or one TorchScript file with --input and --target");
  run_cmd->add_option("--batch,-b", run.batches, "Batch sizes, comma-separated, or 'auto': the largest that trains");
  run_cmd->add_option("--device,-d", run.devices, "Devices: cpu, cuda, cuda:N (default: the best one present)");
  run_cmd->add_option("--precision", run.precisions, "fp32, fp16, bf16 (mixed precision), fp16-pure, bf16-pure, comma-separated");
  run_cmd->add_option("--layout", run.layouts, "nchw or nhwc (channels-last), comma-separated");
  run_cmd->add_option("--optimizer", run.optimizers, "sgd, momentum, adam, adamw, comma-separated");
  run_cmd->add_option("--threads", run.threads, "Intra-op threads, comma-separated (0: one per core)");
  run.script.add_to(*run_cmd);
  run_cmd->add_option("--set", run.sets, "Workload parameter key=value (a comma list is a sweep axis); repeatable");
  run_cmd->add_flag("--forward-only", run.forward_only, "Time inference (forward pass) only");
  run_cmd->add_option("--suite,-s", run.suite, "A built-in suite name (quick, ...) or a suite .toml file");
  run_cmd->add_option("--case", run.cases, "Run this case descriptor (repeatable), e.g. resnet50:b16:fp32:nchw:cpu");
  run_cmd->add_option("--output,-o", run.output, "Results file (default: results/trainbench-<time>.json)");
  run_cmd->add_option("--format,-f", run.format, "Output: " + reporters_help());
  run_cmd->add_flag("--resume", run.resume, "Run only the cases the output's journal does not have yet");
  run_cmd->add_flag("--force", run.force,
                    "With --resume: continue a journal written by a different plan (its records kept as they are)");
  run_cmd->add_option("--report", run.report, "Also write the HTML report of the results to this file");
  run_cmd->add_option("--data", run.data,
                      "Input data: synthetic (default: one batch on the device), a folder of JPEGs in ImageFolder "
                      "layout (CNNs), or a token file (bert, bilstm)");
  run_cmd->add_option("--loader-threads", run.loader_threads,
                      "Loader threads for --data, comma-separated (0: 1 on a CPU case, all cores but one on a GPU case)");
  run_cmd->add_option("--data-dtype", run.data_dtype, "Token file ids: uint16 (nanoGPT's .bin) or uint32");
  run_cmd->add_option("--data-transfer", run.data_transfer,
                      "Images to the device as float (normalized on the host) or uint8 (normalized on the device)");
  run.measure.add_to(*run_cmd);
  run.dist.add_to(*run_cmd);

  DataOptions data_opts;
  CLI::App* data_cmd = app.add_subcommand(
      "data", "Measure the loader alone: images/s (or windows/s and tokens/s) and MB/s per loader thread count");
  data_cmd->add_option("--data", data_opts.data,
                       "A folder of JPEGs/PNGs in ImageFolder layout (ROOT/CLASS/IMAGE.jpg), or a token file")
      ->required();
  data_cmd->add_option("--batch,-b", data_opts.batch, "Batch size")->check(rule(kBatchSize));
  data_cmd->add_option("--loader-threads", data_opts.loader_threads, "Thread counts, comma-separated");
  data_cmd->add_option("--epochs", data_opts.epochs, "Epochs per thread count, each timed on its own");
  data_cmd->add_option("--size", data_opts.size, "Images: crop size (RandomResizedCrop output, square; default 224)");
  data_cmd->add_option("--layout", data_opts.layout, "Images: nchw or nhwc (channels-last)");
  data_cmd->add_option("--precision", data_opts.precision, "Images: the batch's dtype, fp32, bf16 or fp16");
  data_cmd->add_option("--data-transfer", data_opts.transfer, "Images: float (normalized) or uint8 (bytes, as sent to a device)");
  data_cmd->add_option("--seq", data_opts.seq, "Tokens: window length (default 1024)");
  data_cmd->add_option("--data-dtype", data_opts.data_dtype, "Tokens: uint16 (nanoGPT's .bin) or uint32");

  MakeDataOptions make_data;
  CLI::App* make_data_cmd = app.add_subcommand("make-data", "Write photo-like JPEGs in ImageFolder layout, to try --data");
  make_data_cmd->add_option("dir", make_data.dir, "The folder to create (must not exist, or be empty)")->required();
  make_data_cmd->add_option("--images", make_data.images, "How many JPEGs")->required();
  make_data_cmd->add_option("--classes", make_data.classes, "Class folders (default 10)");
  make_data_cmd->add_option("--seed", make_data.seed, "Random seed (the same seed writes the same files)");

  LaunchFlags launch;
  CLI::App* launch_cmd = app.add_subcommand(
      "launch", "Start N data-parallel workers on this node: trainbench launch --nproc N -- run ... --dist");
  launch_cmd->add_option("--nproc", launch.nproc, "Workers on this node (e.g. one per GPU)")->check(rule(kProcessCount));
  launch_cmd->add_option("--nnodes", launch.nnodes, "Nodes in the job")->check(rule(kProcessCount));
  launch_cmd->add_option("--node-rank", launch.node_rank, "This node's index, 0 to nnodes-1 (node 0 hosts rank 0)")
      ->check(rule(kNodeRank));
  launch_cmd->add_option("--master", launch.master, "HOST:PORT of node 0 (default on one node: 127.0.0.1, a free port)");
  launch_cmd->add_option("--grace", launch.grace_s, "Seconds stopped workers get before SIGKILL")
      ->check(rule(kSeconds));
  launch_cmd->add_option("worker", launch.worker_args, "The worker's arguments, after --")->required();
  launch_cmd->positionals_at_end();


  MaxBatchOptions mb;
  CLI::App* mb_cmd = app.add_subcommand("maxbatch", "Find the largest batch that trains (doubling, then bisection)");
  mb_cmd->add_option("--model,-m", mb.models, "Models, comma-separated")->required();
  mb.script.add_to(*mb_cmd);
  mb_cmd->add_option("--set", mb.sets, "Workload parameter key=value (comma list: one search each); repeatable");
  mb_cmd->add_option("--device,-d", mb.devices, "Devices: cpu, cuda, cuda:N");
  mb_cmd->add_option("--precision", mb.precisions, "fp32, fp16, bf16, fp16-pure, bf16-pure");
  mb_cmd->add_option("--layout", mb.layouts, "nchw or nhwc");
  mb_cmd->add_option("--optimizer", mb.optimizers, "sgd, momentum, adam, adamw");
  mb_cmd->add_flag("--forward-only", mb.forward_only, "Search for inference instead of training");
  mb_cmd->add_option("--start", mb.start, "First batch to try")->check(rule(kBatchSize));
  mb_cmd->add_option("--max-batch", mb.max_batch, "Largest batch to try")->check(rule(kBatchSize));
  mb_cmd->add_option("--output,-o", mb.output, "Results file with every try (default: results/maxbatch-<time>.json)");
  mb.measure.warmup = 1;
  mb.measure.min_steps = 2;
  mb.measure.min_time_s = 0.0;
  mb.measure.max_time_s = 10.0;
  mb.measure.add_to(*mb_cmd);

  mb_cmd->add_flag("--no-predict", mb.no_predict, "Search by doubling from --start, without a memory prediction first");

  MemoryOptions mem;
  CLI::App* mem_cmd = app.add_subcommand("memory", "Where a training step's memory goes, and the largest batch per memory size");
  mem_cmd->add_option("--model,-m", mem.models, "Models, comma-separated")->required();
  mem.script.add_to(*mem_cmd);
  mem_cmd->add_option("--set", mem.sets, "Workload parameter key=value (comma list: one case each); repeatable");
  mem_cmd->add_option("--device,-d", mem.devices, "Devices: cpu, cuda, cuda:N");
  mem_cmd->add_option("--precision", mem.precisions, "fp32, fp16, bf16, fp16-pure, bf16-pure");
  mem_cmd->add_option("--layout", mem.layouts, "nchw or nhwc");
  mem_cmd->add_option("--optimizer", mem.optimizers, "sgd, momentum, adam, adamw");
  mem_cmd->add_flag("--forward-only", mem.forward_only, "Inference instead of training");
  mem_cmd->add_option("--batch,-b", mem.batch, "Say whether this batch fits each size, and by how much")->check(rule(kBatchSize));
  mem_cmd->add_option("--fits", mem.fits, "Memory sizes to predict for, e.g. 8G,16G,24G,80G (default: this device's, 8G..80G)");
  mem_cmd->add_option("--measure-batches", mem.measure_batches, "Two or three increasing batches to measure for the fit");
  mem_cmd->add_option("--output,-o", mem.output, "Results file with each measured batch (default: results/memory-<time>.json)");
  mem.measure.warmup = 1;
  mem.measure.min_steps = 2;
  mem.measure.min_time_s = 0.0;
  mem.measure.max_time_s = 10.0;
  mem.measure.add_to(*mem_cmd);

  CompareOptions cmp;
  CLI::App* cmp_cmd = app.add_subcommand("compare", "Compare results files: throughput OTHER/BASE per case, noise-aware");
  cmp_cmd->add_option("files", cmp.files, "BASE.json OTHER.json [MORE.json ...]")->required();
  cmp_cmd->add_option("--format,-f", cmp.format, "table, md, csv, json");
  cmp_cmd->add_option("--output,-o", cmp.output, "Write to this file instead of stdout");
  cmp_cmd->add_option("--ignore", cmp.ignore, "Settings that may differ between runs (layout,precision,optimizer), e.g. nchw vs nhwc");

  ReportOptions rep;
  CLI::App* rep_cmd = app.add_subcommand("report", "Write a self-contained HTML report (charts, tables) of results files");
  rep_cmd->add_option("files", rep.files, "RESULTS.json [MORE.json ...]; the first is BASE")->required();
  rep_cmd->add_option("--output,-o", rep.output, "The HTML file to write")->required();

  OpOptions op;
  CLI::App* op_cmd = app.add_subcommand("op", "Time one layer alone: forward, backward-data, backward-weights");
  op_cmd->add_option("descriptors", op.descriptors, "Op descriptors, e.g. conv:mb32ic64ih56oc64kh3ph1g64 (docs/descriptors.md); "
                     "allreduce:SIZE (inside `launch`)")
      ->required();
  op_cmd->add_option("--device,-d", op.device, "cpu, cuda, cuda:N (default: the best one present)");
  op_cmd->add_option("--precision", op.precisions, "fp32, bf16, fp16, comma-separated");
  op_cmd->add_option("--layout", op.layouts, "nchw or nhwc (conv and bn), comma-separated");
  op_cmd->add_option("--threads", op.threads, "Intra-op threads (0: one per core)")->check(rule(kThreadCount));
  op_cmd->add_option("--min-time", op.min_time_s, "Seconds to measure each phase at least")->check(rule(kSeconds));
  op_cmd->add_option("--max-time", op.max_time_s, "Seconds to measure each phase at most")->check(rule(kSecondsPositive));
  op_cmd->add_flag("--system-allocator", op.system_allocator,
                   "Leave glibc malloc untuned, as run's flag (compare with steps measured that way)");
  op_cmd->add_option("--output,-o", op.output, "Results file (default: results/op-<time>.json)");
  op_cmd->add_option("--format,-f", op.format, "table or json");

  PeakOptions peak;
  CLI::App* peak_cmd = app.add_subcommand("peak", "Measure the device's GEMM, memory-copy and convolution ceilings");
  peak_cmd->add_option("--device,-d", peak.device, "cpu, cuda, cuda:N (default: the best one present)");
  peak_cmd->add_option("--precision", peak.precisions, "GEMM precisions, comma-separated (fp32,bf16,fp16)");
  peak_cmd->add_option("--threads", peak.threads, "Intra-op threads (0: one per core)")->check(rule(kThreadCount));
  peak_cmd->add_option("--gemm-size", peak.gemm_size, "M = N = K of the GEMMs (default 2048 on CPU, 8192 on GPUs)")
      ->check(rule(kGemmSize));
  peak_cmd->add_option("--output,-o", peak.output, "Also write the ceilings as a results file");

  ExplainOptions ex;
  CLI::App* ex_cmd = app.add_subcommand("explain", "Break a model's training step into its layers and flag slow ones");
  ex_cmd->add_option("--model,-m", ex.model, "The model (see `trainbench list`)")->required();
  ex_cmd->add_option("--batch,-b", ex.batch, "Batch size")->required()->check(rule(kBatchSize));
  ex.script.add_to(*ex_cmd);
  ex_cmd->add_option("--set", ex.sets, "Workload parameter key=value; repeatable");
  ex_cmd->add_option("--device,-d", ex.device, "cpu, cuda, cuda:N (default: the best one present)");
  ex_cmd->add_option("--precision", ex.precision, "fp32, bf16, fp16");
  ex_cmd->add_option("--layout", ex.layout, "nchw or nhwc");
  ex_cmd->add_option("--optimizer", ex.optimizer, "sgd, momentum, adam, adamw");
  ex_cmd->add_option("--threads", ex.threads, "Intra-op threads (0: one per core)")->check(rule(kThreadCount));
  ex_cmd->add_option("--op-time", ex.op_min_time_s, "Seconds to measure each phase of each layer at least")
      ->check(rule(kSeconds));
  ex_cmd->add_flag("--no-alternatives", ex.no_alternatives, "Do not time flagged layers in the other layout and precision");
  ex_cmd->add_option("--data", ex.data,
                     "Input data as for run (a JPEG ImageFolder or a token file): the step's data wait and device copy "
                     "become rows of the breakdown");
  ex_cmd->add_option("--loader-threads", ex.loader_threads, "Loader threads for --data (0: the default)")
      ->check(rule(kThreadCount));
  ex_cmd->add_option("--data-dtype", ex.data_dtype, "Token file ids: uint16 or uint32");
  ex_cmd->add_option("--data-transfer", ex.data_transfer, "Images to the device as float or uint8");
  ex_cmd->add_option("--output,-o", ex.output, "Results file (default: results/explain-<time>.json)");
  ex_cmd->add_option("--format,-f", ex.format, "table or json");
  ex.measure.add_to(*ex_cmd);

  std::string descriptor;
  MeasureFlags child_flags;
  int result_fd = 3;
  CLI::App* child_cmd = app.add_subcommand("run-case", "Internal: measure one case in this process");
  child_cmd->group("");  // hidden from --help
  child_cmd->add_option("descriptor", descriptor)->required();
  child_cmd->add_option("--result-fd", result_fd);
  child_flags.add_to(*child_cmd);
  DistFlags child_dist;
  std::string dist_key = "0";
  child_dist.add_to(*child_cmd);
  child_cmd->add_option("--dist-key", dist_key);

  // An unknown first word is most likely a mistyped command: name it (CLI11 would say "arguments not expected").
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    const CLI::App& all = app;
    for (const CLI::App* sub : all.get_subcommands([](const CLI::App*) { return true; })) {
      known = known || sub->check_name(argv[1]);
    }
    if (!known) return bad_input(fmt::format("unknown command '{}'; see trainbench --help", argv[1]));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return bad_input(e.what());
  }

  try {
    // Limits set against each other on the command line (run also weighs a suite's: cmd_run).
    for (const auto& [sub, flags] : {std::make_pair(mb_cmd, &mb.measure), std::make_pair(ex_cmd, &ex.measure),
                                     std::make_pair(mem_cmd, &mem.measure)}) {
      if (app.got_subcommand(sub)) check_limit_conflicts(*flags, limits_given(*sub));
    }
    if (app.got_subcommand(mb_cmd) && mb.start > mb.max_batch) {
      throw InputError(fmt::format("--start {} is above --max-batch {}", mb.start, mb.max_batch));
    }
    if (app.got_subcommand(op_cmd) && op_cmd->count("--min-time") && op_cmd->count("--max-time") &&
        op.min_time_s > op.max_time_s) {
      throw InputError(fmt::format("--min-time {} is above --max-time {}", op.min_time_s, op.max_time_s));
    }
    if (app.got_subcommand(list_cmd)) return cmd_list(list_models);
    if (app.got_subcommand(run_cmd)) return cmd_run(run, *run_cmd);
    if (app.got_subcommand(mb_cmd)) return cmd_maxbatch(mb);
    if (app.got_subcommand(mem_cmd)) return cmd_memory(mem);
    if (app.got_subcommand(cmp_cmd)) return cmd_compare(cmp);
    if (app.got_subcommand(rep_cmd)) return cmd_report(rep);
    if (app.got_subcommand(op_cmd)) return cmd_op(op);
    if (app.got_subcommand(peak_cmd)) return cmd_peak(peak);
    if (app.got_subcommand(ex_cmd)) return cmd_explain(ex);
    if (app.got_subcommand(child_cmd)) return cmd_run_case(descriptor, child_flags, child_dist, dist_key, result_fd);
    if (app.got_subcommand(launch_cmd)) return cmd_launch(launch);
    if (app.got_subcommand(data_cmd)) return cmd_data(data_opts);
    if (app.got_subcommand(make_data_cmd)) return cmd_make_data(make_data);
  } catch (const InputError& e) {
    return bad_input(e.what());
  } catch (const std::exception& e) {
    // Anything else at setup (an unreadable results file, a failed write): one line, not a backtrace.
    const std::string what = e.what();
    std::cerr << "trainbench: error: " << what.substr(0, what.find('\n')) << std::endl;
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace trainbench::cli
