#include "ops/explain.h"

#include <torch/csrc/jit/python/update_graph_executor_opt.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "core/precision.h"
#include "data/verdict.h"
#include "ops/op_kind.h"
#include "workloads/workload.h"
#include "workloads/registry.h"

namespace trainbench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double phase_median(const OpRecord& r, const char* phase) {
  for (const auto& p : r.phases)
    if (p.phase == phase) return p.time_s.median;
  return 0.0;
}

}  // namespace

ExplainLayer explain_layer(const LayerCall& call, const OpRecord& timing, double peak_gflops) {
  ExplainLayer l;
  l.op = call.op.str();
  l.label = call.op.label();
  l.family = call.op.family();
  l.count = call.count;
  l.input_grad = call.input_grad;
  l.status = timing.status;
  l.error = timing.error;
  l.percent_of_peak = kNaN;
  if (!timing.ok()) return l;
  l.fwd_s = phase_median(timing, "fwd");
  l.bwd_data_s = phase_median(timing, "bwd_data");
  l.bwd_weights_s = phase_median(timing, "bwd_weights");
  l.time_s = static_cast<double>(l.count) * timing.total_time_s();
  l.flops = static_cast<double>(l.count) * timing.total_flops();
  if (l.flops > 0.0 && l.time_s > 0.0) {
    l.achieved_gflops = l.flops / l.time_s / 1e9;
    if (std::isfinite(peak_gflops) && peak_gflops > 0.0) l.percent_of_peak = 100.0 * l.achieved_gflops / peak_gflops;
  }
  return l;
}

void attribute(Explanation& e, const FlagRule& rule) {
  e.layers_time_s = 0.0;
  std::map<std::string, std::pair<double, double>> family;  // flops, time
  for (const auto& l : e.layers) {
    if (l.status != Status::ok) continue;
    e.layers_time_s += l.time_s;
    if (l.flops > 0.0) {
      family[l.family].first += l.flops;
      family[l.family].second += l.time_s;
    }
  }
  e.other_time_s = e.step_time_s - e.layers_time_s - e.data_wait_s - e.copy_s;
  std::sort(e.layers.begin(), e.layers.end(),
            [](const ExplainLayer& a, const ExplainLayer& b) { return a.time_s > b.time_s; });
  e.findings.clear();
  const bool have_peak = std::isfinite(e.peak_gflops) && e.peak_gflops > 0.0;
  for (auto& l : e.layers) {
    l.share = e.step_time_s > 0.0 ? l.time_s / e.step_time_s : 0.0;
    l.flagged = false;
    l.finding.clear();
    if (l.status != Status::ok || l.flops <= 0.0 || l.share < rule.min_share) continue;
    const auto& [ff, ft] = family[l.family];
    const double average = ft > 0.0 ? ff / ft / 1e9 : 0.0;
    const bool slow_for_family = average > 0.0 && l.achieved_gflops < rule.below_family * average;
    const bool slow_for_device = have_peak && l.achieved_gflops < rule.below_peak * e.peak_gflops;
    if (!slow_for_family && !slow_for_device) continue;
    l.flagged = true;
    std::string peak_part =
        have_peak ? fmt::format(", {:.1f}% of peak", 100.0 * l.achieved_gflops / e.peak_gflops) : "";
    l.finding = fmt::format(
        "{} (x{}): {:.1f}% of step time at {:.3g} GFLOP/s{}; {:.2g}x the model's {} average ({:.3g} GFLOP/s)", l.label,
        l.count, 100.0 * l.share, l.achieved_gflops, peak_part, average > 0.0 ? l.achieved_gflops / average : 0.0,
        l.family, average);
    e.findings.push_back(l.finding);
  }
  // The input pipeline's rows, by the share that makes a run's verdict input-bound (data/verdict.h).
  if (e.real_data && e.step_time_s > 0.0) {
    const double wait_share = e.data_wait_s / e.step_time_s;
    const double copy_share = e.copy_s / e.step_time_s;
    if (wait_share >= data::kInputBoundWaitShare) {
      e.findings.push_back(fmt::format(
          "the step waits {:.3g} ms ({:.0f}% of it) for its batch: input-bound; more --loader-threads (or a faster "
          "source) shortens the step, the layers do not",
          1e3 * e.data_wait_s, 100.0 * wait_share));
    }
    if (copy_share >= data::kInputBoundWaitShare) {
      e.findings.push_back(fmt::format(
          "the host-to-device copy adds {:.3g} ms ({:.0f}% of the step) that the previous step did not hide{}",
          1e3 * e.copy_s, 100.0 * copy_share,
          parse_case(e.case_name).data_transfer == "uint8" ? ""
                                                           : ": try --data-transfer uint8 (a quarter of the bytes)"));
    }
  }
  if (e.step_time_s > 0.0 && std::fabs(e.other_time_s) > 0.3 * e.step_time_s) {
    e.findings.push_back(fmt::format("{:.0f}% of the step ({:.3g} ms) is {} the layers timed alone: {}",
                                     100.0 * std::fabs(e.other_time_s) / e.step_time_s, 1e3 * std::fabs(e.other_time_s),
                                     e.other_time_s > 0.0 ? "outside" : "less than",
                                     e.other_time_s > 0.0
                                         ? "activations, pooling, element-wise ops, the loss and the optimizer step"
                                         : "the layers run faster inside the step than alone (caches, fused work)"));
  }
}

void summarize_alternatives(Explanation& e) {
  const Case base = parse_case(e.case_name);
  auto flag_of = [&](const ExplainAlternative& a) {
    return a.precision != base.precision.str() ? "--precision " + a.precision : "--layout " + a.layout;
  };
  std::map<std::string, std::pair<double, double>> totals;  // flag -> flagged layers' time, as is and with it
  std::map<std::string, std::string> failures;
  for (auto& l : e.layers) {
    if (!l.flagged || l.alternatives.empty()) continue;
    const ExplainAlternative* best = nullptr;
    for (const auto& a : l.alternatives) {
      if (a.status != Status::ok) {
        failures[flag_of(a)] = a.error;
        continue;
      }
      totals[flag_of(a)].first += l.time_s;
      totals[flag_of(a)].second += static_cast<double>(l.count) * a.time_s;
      if (a.speedup > 1.05 && (best == nullptr || a.speedup > best->speedup)) best = &a;
    }
    l.finding += best != nullptr ? fmt::format("; try {} ({:.2f}x faster)", flag_of(*best), best->speedup)
                                 : std::string("; no other layout or precision measured faster");
  }
  // The layer lines again (now with their advice), then one line per alternative, then the rest.
  std::vector<std::string> findings;
  for (const auto& l : e.layers)
    if (l.flagged) findings.push_back(l.finding);
  for (const auto& [flag, t] : totals) {
    const double speedup = t.second > 0.0 ? t.first / t.second : 0.0;
    findings.push_back(fmt::format(
        "with {} the flagged layers take {:.3g} ms instead of {:.3g} ms per step: {:.2f}x, {}", flag, 1e3 * t.second,
        1e3 * t.first, speedup, speedup > 1.05 ? "faster" : (speedup < 0.95 ? "slower" : "about the same")));
  }
  for (const auto& [flag, why] : failures)
    findings.push_back(fmt::format("with {} the flagged layers could not run: {}", flag, why));
  for (const auto& f : e.findings) {
    const bool layer_line = std::any_of(e.layers.begin(), e.layers.end(), [&](const ExplainLayer& l) {
      return l.flagged && f.rfind(l.label + " (x", 0) == 0;
    });
    if (!layer_line) findings.push_back(f);
  }
  e.findings = findings;
}

Explanation explain_case(const ExplainSettings& s, const Record& step,
                         const std::function<void(size_t, size_t, const std::string&)>& progress) {
  Explanation e;
  e.case_name = s.c.descriptor();
  e.step_time_s = step.step_time_s.median;
  e.peak_gflops = s.peak_gflops;
  if (step.data) {
    e.real_data = true;
    e.data_wait_s = step.data->median_wait_s;
    e.copy_s = step.data->median_copy_s;
  }

  std::vector<LayerCall> calls;
  {
    // A TorchScript model's optimised graph runs its differentiable subgraphs on detached inputs, so
    // a layer inside one would read as needing no input gradient (and its data-gradient FLOPs would be
    // left out); the census runs the graph unoptimised, which calls the same layers on the same shapes
    // under plain autograd. Built-in models are not TorchScript: the switch does not touch them.
    struct UnoptimisedGraphs {
      bool was = torch::jit::getGraphExecutorOptimize();
      UnoptimisedGraphs() { torch::jit::setGraphExecutorOptimize(false); }
      ~UnoptimisedGraphs() { torch::jit::setGraphExecutorOptimize(was); }
    } unoptimised;
    torch::manual_seed(0);
    // The layers' shapes do not depend on where the batch comes from: a synthetic batch starts no loader.
    WorkloadOptions shapes = s.c;
    shapes.data = "synthetic";
    auto w = make_workload(shapes);
    calls = collect_layers([&] { w->step(); });
  }
  OpSettings os;
  os.device = s.c.device;
  os.precision = s.c.precision;
  os.layout = s.c.layout;
  os.measure = s.op_measure;
  size_t i = 0;
  for (const auto& call : calls) {
    if (progress) progress(i++, calls.size(), call.op.str());
    os.input_grad = call.input_grad;
    e.layers.push_back(explain_layer(call, time_op(call.op, os), s.peak_gflops));
  }
  attribute(e);
  if (!s.try_alternatives) return e;

  std::vector<std::pair<Precision, Layout>> alternatives;
  alternatives.emplace_back(s.c.precision, other_layout(s.c.layout));
  // The other precision: bf16 where the case computes in fp32, else fp32.
  alternatives.emplace_back(parse_precision(s.c.precision.type == "fp32" ? "bf16" : "fp32"), s.c.layout);
  for (auto& l : e.layers) {
    if (!l.flagged) continue;
    const OpDescriptor op = parse_op(l.op);
    const double base = l.time_s / static_cast<double>(l.count);
    for (const auto& [precision, layout] : alternatives) {
      if (layout != s.c.layout && !find_op_kind(op.kind)->layout_matters) continue;
      OpSettings alt = os;
      alt.precision = precision;
      alt.layout = layout;
      alt.input_grad = l.input_grad;
      if (progress) progress(i++, calls.size(), l.op + " (" + precision.str() + ", " + to_string(layout) + ")");
      const OpRecord r = time_op(op, alt);
      ExplainAlternative a;
      a.precision = precision.str();
      a.layout = to_string(layout);
      a.status = r.status;
      a.error = r.error;
      if (r.ok()) {
        a.time_s = r.total_time_s();
        a.speedup = a.time_s > 0.0 ? base / a.time_s : 0.0;
      }
      l.alternatives.push_back(a);
    }
  }
  summarize_alternatives(e);
  return e;
}

}  // namespace trainbench
