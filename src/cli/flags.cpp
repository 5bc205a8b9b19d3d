// Each subcommand's flags: the shared groups (SweepFlags, MeasureFlags, ... in cli/options.h) and its
// own, then the checks that weigh one flag against another before it runs.
#include "cli/flags.h"

#include <memory>

#include "cli/options.h"
#include "cli/shared_flags.h"
#include "results/reporter.h"
#include "core/value_rules.h"
#include "workloads/script.h"

namespace trainbench::cli {
namespace {

// maxbatch and memory measure many short tries: a step or two each, not a stable median. They answer
// what fits, so a CPU case's heap is glibc's as a PyTorch program has it: with the tuned heap, freed
// large blocks stay and whether the next one reuses a hole decides the footprint by whole blocks
// (docs/memory.md, "The heap a prediction is for").
void trial_defaults(MeasureFlags& m) {
  m.stop.warmup_steps = 1;
  m.stop.warmup_fixed = true;
  m.stop.min_steps = 2;
  m.stop.min_time_s = 0.0;
  m.stop.max_time_s = 10.0;
  m.system_allocator = true;
}

}  // namespace

Command add_list(CLI::App& app) {
  auto models = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand(
      "list", "Models and suites with input shape, default batch, parameter count and FLOPs per sample");
  sub->add_option("models", *models, "Only these models (default: every model, then the suites)");
  return {sub, [models] { return cmd_list(*models); }};
}

Command add_run(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Measure training throughput of a sweep of cases");
  o->SweepFlags::add_to(*sub);
  add_batch(*sub, o->batches, "Batch sizes, comma-separated, or 'auto': the largest that trains");
  add_threads(*sub, o->threads, "Intra-op threads, comma-separated (0: one per core)");
  sub->add_option("--suite,-s", o->suite, "A built-in suite name (quick, ...) or a suite .toml file");
  sub->add_option("--case", o->cases, "Run this case descriptor (repeatable), e.g. resnet50:b16:fp32:nchw:cpu");
  add_output(*sub, o->output, "Results file (default: results/trainbench-<time>.json)");
  add_format(*sub, o->format, "Output: " + reporters_help());
  sub->add_flag("--resume", o->resume, "Run only the cases the output's journal does not have yet");
  sub->add_flag("--force", o->force,
                "With --resume: continue a journal written by a different plan (its records kept as they are)");
  sub->add_option("--report", o->report, "Also write the HTML report of the results to this file");
  o->InputDataFlags::add_to(*sub);
  add_loader_threads(
      *sub, o->loader_threads,
      "Loader threads for --data, comma-separated (0: 1 on a CPU case, all cores but one on a GPU case)");
  o->measure.add_to(*sub);
  o->dist.add_to(*sub);
  o->store.add_to(*sub);
  return {sub, [o, sub] { return cmd_run(*o, *sub); }};
}

Command add_data(CLI::App& app) {
  auto o = std::make_shared<DataOptions>();
  CLI::App* sub = app.add_subcommand(
      "data", "Measure the loader alone: images/s (or windows/s and tokens/s) and MB/s per loader thread count");
  add_data(*sub, o->data, "A folder of JPEGs/PNGs in ImageFolder layout (ROOT/CLASS/IMAGE.jpg), or a token file")
      ->required();
  add_batch(*sub, o->batch, "Batch size")->check(rule(kBatchSize));
  add_loader_threads(*sub, o->loader_threads, "Thread counts, comma-separated");
  sub->add_option("--epochs", o->epochs, "Epochs per thread count, each timed on its own");
  sub->add_option("--size", o->size, "Images: crop size (RandomResizedCrop output, square; default 224)");
  add_layout(*sub, o->layout, Many::one, "Images");
  add_precision(*sub, o->precision, Many::one, PrecisionSet::compute_types, "Images: the batch's dtype");
  add_data_transfer(*sub, o->transfer, "Images");
  sub->add_option("--seq", o->seq, "Tokens: window length (default 1024)");
  add_data_dtype(*sub, o->data_dtype, "Tokens");
  add_max_image_pixels(*sub, o->max_image_pixels, "Images");
  return {sub, [o] { return cmd_data(*o); }};
}

Command add_make_data(CLI::App& app) {
  auto o = std::make_shared<MakeDataOptions>();
  CLI::App* sub = app.add_subcommand("make-data", "Write photo-like JPEGs in ImageFolder layout, to try --data");
  sub->add_option("dir", o->dir, "The folder to create (must not exist, or be empty)")->required();
  // A hundred million files is beyond any folder a benchmark needs (ImageNet has 1.28 million).
  constexpr NumberRule kImageCount{1.0, 1e8, false, true};
  sub->add_option("--images", o->images, "How many JPEGs")->required()->check(rule(kImageCount));
  sub->add_option("--classes", o->classes, "Class folders (default 10)")->check(rule(kImageCount));
  sub->add_option("--seed", o->seed, "Random seed (the same seed writes the same files)");
  return {sub, [o] { return cmd_make_data(*o); }};
}

Command add_launch(CLI::App& app) {
  auto o = std::make_shared<LaunchFlags>();
  CLI::App* sub = app.add_subcommand(
      "launch", "Start N data-parallel workers on this node: trainbench launch --nproc N -- run ... --dist");
  sub->add_option("--nproc", o->nproc, "Workers on this node (e.g. one per GPU)")->check(rule(kProcessCount));
  sub->add_option("--nnodes", o->nnodes, "Nodes in the job")->check(rule(kProcessCount));
  sub->add_option("--node-rank", o->node_rank, "This node's index, 0 to nnodes-1 (node 0 hosts rank 0)")
      ->check(rule(kNodeRank));
  sub->add_option("--master", o->master, "HOST:PORT of node 0 (default on one node: 127.0.0.1, a free port)");
  sub->add_option("--grace", o->grace_s, "Seconds stopped workers get before SIGKILL")->check(rule(kSeconds));
  sub->add_option("worker", o->worker_args, "The worker's arguments, after --")->required();
  sub->positionals_at_end();
  return {sub, [o] { return cmd_launch(*o); }};
}

Command add_maxbatch(CLI::App& app) {
  auto o = std::make_shared<MaxBatchOptions>();
  CLI::App* sub = app.add_subcommand("maxbatch", "Find the largest batch that trains (doubling, then bisection)");
  o->SweepFlags::add_to(*sub);
  sub->get_option("--model")->required();
  sub->add_option("--start", o->start, "First batch to try")->check(rule(kBatchSize));
  sub->add_option("--max-batch", o->max_batch, "Largest batch to try")->check(rule(kBatchSize));
  add_output(*sub, o->output, "Results file with every try (default: results/maxbatch-<time>.json)");
  trial_defaults(o->measure);
  o->measure.add_to(*sub);
  sub->add_flag("--no-predict", o->no_predict, "Search by doubling from --start, without a memory prediction first");
  o->store.add_to(*sub);
  return {sub, [o, sub] {
            check_limit_conflicts(o->measure);
            if (o->start > o->max_batch) {
              throw InputError(fmt::format("--start {} is above --max-batch {}", o->start, o->max_batch));
            }
            o->measure.place_script_check();
            return cmd_maxbatch(*o);
          }};
}

Command add_memory(CLI::App& app) {
  auto o = std::make_shared<MemoryOptions>();
  CLI::App* sub =
      app.add_subcommand("memory", "Where a training step's memory goes, and the largest batch per memory size");
  o->SweepFlags::add_to(*sub);
  sub->get_option("--model")->required();
  add_batch(*sub, o->batch, "Say whether this batch fits each size, and by how much")->check(rule(kBatchSize));
  sub->add_option("--fits", o->fits,
                  "Memory sizes to predict for, e.g. 8G,16G,24G,80G (default: this device's, 8G..80G)");
  sub->add_option("--measure-batches", o->measure_batches, "Two or three increasing batches to measure for the fit");
  add_gpu_context(*sub, o->gpu_context,
                  "A CPU case's sizes as CUDA cards: how much of a card lies outside LibTorch's allocator "
                  "(default: 693M, measured on an H100 with CUDA 13.0)");
  CLI::Option* within =
      sub->add_option("--within", o->within_pct,
                      "Try each size this machine holds under itself as a memory limit until its largest batch is "
                      "known within PCT percent (default 10; 0: exactly, as maxbatch)")
          ->check(rule(kSearchPercent));
  sub->add_flag("--line-only", o->line_only,
                "Predict every size from the fitted line alone, trying none under itself (faster, less exact)")
      ->excludes(within);
  add_output(*sub, o->output, "Results file with each measured batch (default: results/memory-<time>.json)");
  trial_defaults(o->measure);
  o->measure.add_to(*sub);
  o->store.add_to(*sub);
  return {sub, [o, sub] {
            check_limit_conflicts(o->measure);
            o->measure.place_script_check();
            return cmd_memory(*o);
          }};
}

Command add_op(CLI::App& app) {
  auto o = std::make_shared<OpOptions>();
  CLI::App* sub = app.add_subcommand("op", "Time one layer alone: forward, backward-data, backward-weights");
  sub->add_option("descriptors", o->descriptors,
                  "Op descriptors, e.g. conv:mb32ic64ih56oc64kh3ph1g64 (docs/descriptors.md); allreduce:SIZE (inside "
                  "`launch`)")
      ->required();
  o->InProcessFlags::add_to(*sub);
  add_precision(*sub, o->precisions, Many::list);
  add_layout(*sub, o->layouts, Many::list, "conv and bn");
  add_stop_setting(*sub, stop_setting("min_time"), o->min_time_s, "Seconds to measure each phase at least");
  add_stop_setting(*sub, stop_setting("max_time"), o->max_time_s, "Seconds to measure each phase at most");
  add_system_allocator(*sub, o->system_allocator,
                       "Leave glibc malloc untuned, as run's flag (compare with steps measured that way)");
  add_output(*sub, o->output, "Results file (default: results/op-<time>.json)");
  add_format(*sub, o->format, "table or json");
  return {sub, [o, sub] {
            if (sub->count("--min-time") && sub->count("--max-time") && o->min_time_s > o->max_time_s) {
              throw InputError(fmt::format("--min-time {} is above --max-time {}", o->min_time_s, o->max_time_s));
            }
            return cmd_op(*o);
          }};
}

Command add_peak(CLI::App& app) {
  auto o = std::make_shared<PeakOptions>();
  CLI::App* sub = app.add_subcommand("peak", "Measure the device's GEMM, memory-copy and convolution ceilings");
  o->InProcessFlags::add_to(*sub);
  add_precision(*sub, o->precisions, Many::list, PrecisionSet::compute_types);
  sub->add_option("--gemm-size", o->gemm_size, "M = N = K of the GEMMs (default 2048 on CPU, 8192 on GPUs)")
      ->check(rule(kGemmSize));
  add_output(*sub, o->output, "Also write the ceilings as a results file");
  sub->add_flag("--if-missing", o->if_missing,
                "Measure only when the cache has no entry for this device, thread count and LibTorch (make run)");
  return {sub, [o] { return cmd_peak(*o); }};
}

Command add_explain(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  CLI::App* sub = app.add_subcommand("explain", "Break a model's training step into its layers and flag slow ones");
  add_model(*sub, o->model, Many::one)->required();
  add_batch(*sub, o->batch, "Batch size")->required()->check(rule(kBatchSize));
  o->script.add_to(*sub);
  add_set(*sub, o->sets, Many::one);
  o->InProcessFlags::add_to(*sub);
  add_precision(*sub, o->precision, Many::one);
  add_layout(*sub, o->layout, Many::one);
  add_optimizer(*sub, o->optimizer, Many::one);
  add_op_time(*sub, o->op_min_time_s, "Seconds to measure each phase of each layer at least");
  add_no_alternatives(*sub, o->no_alternatives, "Do not time flagged layers in the other layout and precision");
  o->InputDataFlags::add_to(*sub);
  add_loader_threads(*sub, o->loader_threads, "Loader threads for --data (0: the default)")->check(rule(kThreadCount));
  add_output(*sub, o->output, "Results file (default: results/explain-<time>.json)");
  add_format(*sub, o->format, "table or json");
  o->measure.add_to(*sub);
  return {sub, [o, sub] {
            check_limit_conflicts(o->measure);
            o->measure.place_script_check();
            return cmd_explain(*o);
          }};
}

Command add_run_case(CLI::App& app) {
  auto o = std::make_shared<RunCaseOptions>();
  CLI::App* sub = app.add_subcommand("run-case", "Internal: measure one case in this process");
  sub->group("");  // hidden from --help
  sub->add_option("descriptor", o->descriptor)->required();
  add_result_fd(*sub, o->result_fd);
  o->measure.add_to(*sub);
  o->dist.add_to(*sub);
  sub->add_option("--dist-key", o->dist_key);
  return {sub, [o] {
            ScriptCheckPlace place;  // this process is the case's own: it checks a TorchScript file as it builds it
            place.kind = ScriptCheckPlace::Kind::case_setup;
            set_script_check_place(place);
            return cmd_run_case(*o);
          }};
}

Command add_explain_layers(CLI::App& app) {
  auto o = std::make_shared<ExplainLayersOptions>();
  CLI::App* sub = app.add_subcommand("explain-layers", "Internal: time explain's layers in this process");
  sub->group("");  // hidden from --help
  sub->add_option("from", o->from)->required();
  add_op_time(*sub, o->op_min_time_s, "");
  add_no_alternatives(*sub, o->no_alternatives, "");
  add_result_fd(*sub, o->result_fd);
  o->measure.add_to(*sub);
  return {sub, [o] {
            ScriptCheckPlace place;  // this process is the census's own: it checks a TorchScript file as it builds it
            place.kind = ScriptCheckPlace::Kind::case_setup;
            set_script_check_place(place);
            return cmd_explain_layers(*o);
          }};
}

Command add_script_check(CLI::App& app) {
  auto o = std::make_shared<ScriptCheckOptions>();
  CLI::App* sub = app.add_subcommand("script-check", "Internal: check a TorchScript file in this process");
  sub->group("");  // hidden from --help
  add_memory_limit(*sub, o->memory_limit, "");
  add_result_fd(*sub, o->result_fd);
  sub->add_option("file", o->file)->required();
  sub->add_option("input", o->input)->required();
  sub->add_option("target", o->target)->required();
  sub->add_option("vocab", o->vocab)->required();
  return {sub, [o] {
            set_script_check_place(ScriptCheckPlace{});  // this process is the child that checks
            return cmd_script_check(*o);
          }};
}

// The subcommands whose file is their own (the others above): one declaration here each.
Command add_predict(CLI::App& app);  // cli/predict.cpp

std::vector<Command> add_commands(CLI::App& app) {
  return {add_list(app),     add_run(app),      add_data(app),         add_make_data(app),     add_launch(app),
          add_maxbatch(app), add_memory(app),   add_compare(app),      add_report(app),        add_op(app),
          add_peak(app),     add_explain(app),  add_devices(app),      add_predict(app),       add_store(app),
          add_board(app),    add_run_case(app), add_script_check(app), add_explain_layers(app)};
}

}  // namespace trainbench::cli
