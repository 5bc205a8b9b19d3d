// `trainbench op`: layers alone (DeepBench style), each of forward, backward-data and backward-weights
// timed separately, for every descriptor x precision x layout given.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/options.h"
#include "ops/op_timer.h"
#include "ops/peak.h"
#include "results/printer_ops.h"
#include "results/journal.h"
#include "results/results_file.h"
#include "runner/plan.h"
#include "runner/run_context.h"

namespace trainbench::cli {

// `trainbench op`: layers alone, each phase timed.
struct OpOptions : InProcessFlags {
  std::vector<std::string> descriptors;
  std::string precisions = "fp32", layouts = "nchw";
  double min_time_s = 0.2;  // per phase
  double max_time_s = 5.0;
  bool system_allocator = false;  // as run's --system-allocator
  std::string output;
  std::string format = "table";  // table | json
};

DeviceSpec resolve_device(const std::string& text) {
  DeviceSpec d;
  try {
    d = parse_device(text.empty() ? best_device() : text);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  const std::string why = device_unavailable_reason(d);
  if (!why.empty()) throw InputError(why);
  return d;
}

std::vector<std::string> checked_list(const std::string& text, const std::string& what,
                                      const std::vector<std::string>& allowed) {
  std::vector<std::string> values = split_list(text, what);
  for (const auto& v : values) {
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw InputError(fmt::format("unknown {} '{}' (expected one of: {})", what, v, list));
    }
  }
  return values;
}

int prepare_in_process(const DeviceSpec& device, int threads, bool tune_allocator) {
  Case proxy;
  proxy.device = device;
  proxy.threads = threads;
  ChildSettings s;
  s.tune_allocator = tune_allocator;
  return prepare_child_process(proxy, s);
}

namespace {

// `op allreduce:SIZE ...` (inside `launch`): the all-reduce bandwidth of the process group.
int op_allreduce(const OpOptions& o) {
  AllreduceFlags ar;
  for (const auto& d : o.descriptors) {
    if (d.rfind("allreduce", 0) != 0)
      throw InputError("'" + d + "': allreduce descriptors run on their own, not beside layer descriptors");
    if (d != "allreduce") ar.cases += (ar.cases.empty() ? "" : ",") + d;  // bare "allreduce": DeepBench's sizes
  }
  ar.measure.stop.warmup_steps = 2;
  ar.measure.stop.min_steps = 5;
  ar.measure.stop.min_time_s = o.min_time_s;
  ar.measure.stop.max_time_s = o.max_time_s;
  // The device picks the backend: NCCL (RCCL) for a GPU, one per local rank; Gloo on the CPU.
  ar.dist.backend = resolve_device(o.device).is_gpu() ? "nccl" : "gloo";
  return cmd_dist_allreduce(ar);
}

}  // namespace

int cmd_op(const OpOptions& o) {
  for (const auto& d : o.descriptors)
    if (d.rfind("allreduce", 0) == 0) return op_allreduce(o);
  std::vector<OpDescriptor> ops;
  for (const auto& text : o.descriptors) {
    try {
      ops.push_back(parse_op(text));
    } catch (const OpDescriptorError& e) {
      throw InputError(e.what());
    }
  }
  const DeviceSpec device = resolve_device(o.device);
  const auto precisions = checked_list(o.precisions, "precision", precision_names());
  const auto layouts = checked_list(o.layouts, "layout", layout_names());
  if (o.format != "table" && o.format != "json") throw InputError("unknown format '" + o.format + "' (table or json)");
  if (o.max_time_s < o.min_time_s) throw InputError("--max-time is shorter than --min-time");
  Journal output_lock;  // held until the results are written
  const std::string output = claim_command_output(o.output, "op", {}, default_store_or_none(), output_lock);

  const int threads = prepare_in_process(device, o.threads, !o.system_allocator);
  ResultsFile results;
  results.context = collect_context(threads, device.str());
  results.context.cpu_allocator = o.system_allocator ? "system" : "tuned";
  results.context.peak =
      find_cached_peak(device.str(), results.context.device_name, threads, results.context.libtorch_version);
  OpSettings s;
  s.device = device;
  s.measure = default_op_measure();
  s.measure.min_time_s = o.min_time_s;
  s.measure.max_time_s = o.max_time_s;
  size_t failed = 0, i = 0;
  const size_t total = ops.size() * precisions.size() * layouts.size();
  for (const auto& op : ops) {
    for (const auto& precision : precisions) {
      for (const auto& layout : layouts) {
        s.precision = parse_precision(precision);
        s.layout = parse_layout(layout);
        std::cerr << fmt::format("[op {} of {}] {} {} {}\n", ++i, total, op.str(), precision, layout);
        results.ops.push_back(time_op(op, s));
        if (!results.ops.back().ok()) ++failed;
        write_results_atomic(output, results);  // after every op: an interrupted sweep keeps what it measured
      }
    }
  }
  if (o.format == "json") {
    std::cout << results_to_string(results);
  } else {
    std::cout << print_op_table(results.ops, results.context.peak ? &*results.context.peak : nullptr);
  }
  std::cerr << fmt::format("{} op case(s); results: {}{}\n", total, output,
                           failed ? fmt::format(" ({} failed)", failed) : "");
  return failed ? kExitFailure : kExitOk;
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

}  // namespace trainbench::cli
