// The chart data of the HTML report: speed-up per model, throughput against batch size, the ablation,
// throughput against world size (data parallel); the memory charts' data come from report_memory.cpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/device_text.h"
#include "report/compare.h"
#include "report/html_report.h"
#include "cases/workload_info.h"

namespace trainbench {

namespace detail {

std::string sweep_key(const Record& r) {
  Record copy = r;
  copy.batch_size = 0;
  std::string k = join_key(copy, false);
  const auto pos = k.find(":b0:");
  if (pos != std::string::npos) k.erase(pos, 3);
  return k;
}

}  // namespace detail

namespace {

using detail::sweep_key;
using nlohmann::json;

json number_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

// "a.json (cuda:0)"; on a CPU the thread count too, since it is what tells two CPU runs apart.
std::string series_label(const ReportRun& run) {
  const Context& c = run.file.context;
  if (is_cpu_device_text(c.device) && c.threads > 0)
    return run.label + " (" + c.device + ", " + std::to_string(c.threads) + " threads)";
  return run.label + " (" + c.device + ")";
}

// Speed-up per model: the geometric mean of the OTHER/BASE ratios of the model's joined cases.
json speedup_model(const std::vector<ReportRun>& runs) {
  if (runs.size() < 2) return nullptr;
  std::vector<std::string> models;
  std::vector<std::map<std::string, std::vector<double>>> ratios;  // per OTHER: model -> ratios
  json means = json::array();
  for (size_t i = 1; i < runs.size(); ++i) {
    const Comparison c = compare_runs(runs[0].file, runs[i].file, runs[0].label, runs[i].label);
    ratios.emplace_back();
    for (const auto& cc : c.cases) {
      if (!cc.ratio) continue;
      if (std::find(models.begin(), models.end(), cc.base.model) == models.end()) models.push_back(cc.base.model);
      ratios.back()[cc.base.model].push_back(*cc.ratio);
    }
    json m = {{"other", runs[i].label}, {"rows", json::array()}};
    for (const auto& fm : c.means) m["rows"].push_back({family_title(fm.family), fm.geomean, fm.count});
    means.push_back(m);
  }
  json series = json::array();
  for (size_t i = 0; i < ratios.size(); ++i) {
    json data = json::array(), counts = json::array();
    for (const auto& model : models) {
      auto it = ratios[i].find(model);
      data.push_back(it == ratios[i].end() ? json(nullptr) : number_or_null(geometric_mean(it->second)));
      counts.push_back(it == ratios[i].end() ? 0 : it->second.size());
    }
    series.push_back(
        {{"label", series_label(runs[i + 1]) + " / " + series_label(runs[0])}, {"data", data}, {"counts", counts}});
  }
  return {{"base", series_label(runs[0])}, {"labels", models}, {"series", series}, {"means", means}};
}

// One line per run (and per thread count when a run sweeps threads) for each workload run at two or
// more batch sizes. Out-of-memory points have no throughput; they are drawn as crosses on the axis.
json sweeps_model(const std::vector<ReportRun>& runs) {
  struct Point {
    double throughput = NAN;
    bool oom = false;
  };
  std::vector<std::string> order;
  std::map<std::string, std::string> units;
  // key -> series label -> batch -> point
  std::map<std::string, std::map<std::string, std::map<int64_t, Point>>> by_key;
  std::map<std::string, std::vector<std::string>> series_order;
  for (const auto& run : runs) {
    std::map<std::string, std::set<int>> threads_of;
    for (const auto& r : run.file.benchmarks) threads_of[sweep_key(r)].insert(r.threads);
    for (const auto& r : run.file.benchmarks) {
      const std::string k = sweep_key(r);
      if (!by_key.count(k)) order.push_back(k);
      std::string label = series_label(run);
      if (threads_of[k].size() > 1) label += " t" + std::to_string(r.threads);
      auto& series = by_key[k];
      if (!series.count(label)) series_order[k].push_back(label);
      Point& p = series[label][r.batch_size];
      if (r.ok()) p.throughput = r.throughput;
      p.oom = r.status == Status::oom;
      units.emplace(k, r.unit);
    }
  }
  json out = json::array();
  for (const auto& k : order) {
    std::set<int64_t> batches;
    for (const auto& [label, points] : by_key[k])
      for (const auto& [b, p] : points) batches.insert(b);
    if (batches.size() < 2) continue;
    json series = json::array();
    json oom_text = json::array();
    for (const auto& label : series_order[k]) {
      const auto& points = by_key[k][label];
      json data = json::array(), oom = json::array();
      for (int64_t b : batches) {
        auto it = points.find(b);
        const bool is_oom = it != points.end() && it->second.oom;
        data.push_back(it == points.end() ? json(nullptr) : number_or_null(it->second.throughput));
        oom.push_back(is_oom ? json(0) : json(nullptr));
        if (is_oom) oom_text.push_back(label + " at batch " + std::to_string(b));
      }
      series.push_back({{"label", label}, {"data", data}, {"oom", oom}});
    }
    out.push_back({{"title", k},
                   {"unit", units[k]},
                   {"batches", json(std::vector<int64_t>(batches.begin(), batches.end()))},
                   {"series", series},
                   {"oom", oom_text}});
  }
  return out;
}

// An ablation workload's variants side by side (its registry entry's AblationInfo: which parameter names
// the variant, their order, the heading), throughput and achieved GFLOP/s.
json ablation_model(const std::vector<ReportRun>& runs, const WorkloadInfo& w) {
  const AblationInfo& ablation = *w.ablation;
  // Category: variant, plus the rest of the case when the ablation was run at several settings.
  struct Cat {
    int variant_rank;
    std::string rest, variant;
    bool operator<(const Cat& o) const { return std::tie(rest, variant_rank) < std::tie(o.rest, o.variant_rank); }
  };
  std::set<Cat> cats;
  std::set<std::string> rests;
  std::vector<std::map<std::pair<std::string, std::string>, const Record*>> per_run(runs.size());
  std::string unit;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& r : runs[i].file.benchmarks) {
      if (r.model != w.name) continue;
      const std::string variant = effective_params(w, r.params)[ablation.param];
      Record rest_record = r;
      rest_record.params.erase(ablation.param);
      const std::string rest = join_key(rest_record, false);
      const auto& variants = ablation.variants;
      const auto rank = std::find(variants.begin(), variants.end(), variant) - variants.begin();
      cats.insert({static_cast<int>(rank), rest, variant});
      rests.insert(rest);
      per_run[i].emplace(std::make_pair(variant, rest), &r);
      unit = r.unit;
    }
  }
  if (cats.empty()) return nullptr;
  json labels = json::array();
  for (const auto& c : cats) labels.push_back(rests.size() > 1 ? c.variant + " · " + c.rest : c.variant);
  json series = json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    json thr = json::array(), gf = json::array();
    bool any = false;
    for (const auto& c : cats) {
      auto it = per_run[i].find({c.variant, c.rest});
      const bool ok = it != per_run[i].end() && it->second->ok();
      any = any || ok;
      thr.push_back(ok ? number_or_null(it->second->throughput) : json(nullptr));
      gf.push_back(ok && it->second->achieved_gflops > 0 ? number_or_null(it->second->achieved_gflops) : json(nullptr));
    }
    if (any) series.push_back({{"label", series_label(runs[i])}, {"throughput", thr}, {"gflops", gf}});
  }
  if (series.empty()) return nullptr;
  return {{"workload", w.name}, {"title", ablation.title}, {"labels", labels}, {"unit", unit}, {"series", series}};
}

// The first ablation workload of the registry that these runs measured (the registry has one: convnet).
json ablation_model(const std::vector<ReportRun>& runs) {
  for (const auto& w : all_workloads()) {
    if (!w.ablation) continue;
    json m = ablation_model(runs, w);
    if (!m.is_null()) return m;
  }
  return nullptr;
}

// `trainbench explain` files: each layer's part of the step, forward and backward stacked, the
// unattributed rest as its own bar, and the findings as the caption.
json explain_model(const std::vector<ReportRun>& runs) {
  json out = json::array();
  for (const auto& run : runs) {
    if (!run.file.explain) continue;
    const Explanation& e = *run.file.explain;
    json labels = json::array(), fwd = json::array(), bwd_data = json::array(), bwd_weights = json::array(),
         other = json::array(), flagged = json::array();
    for (const auto& l : e.layers) {
      if (l.status != Status::ok) continue;
      const double n = static_cast<double>(l.count);
      labels.push_back(fmt::format("{}{} ×{}", l.flagged ? "⚠ " : "", l.label, l.count));
      fwd.push_back(number_or_null(1e3 * n * l.fwd_s));
      bwd_data.push_back(number_or_null(1e3 * n * l.bwd_data_s));
      bwd_weights.push_back(number_or_null(1e3 * n * l.bwd_weights_s));
      other.push_back(nullptr);
      flagged.push_back(l.flagged);
    }
    labels.push_back(e.other_time_s >= 0 ? "other (not in a timed layer)" : "other (layers alone exceed the step)");
    fwd.push_back(nullptr);
    bwd_data.push_back(nullptr);
    bwd_weights.push_back(nullptr);
    other.push_back(number_or_null(1e3 * e.other_time_s));
    flagged.push_back(false);
    out.push_back({{"title", series_label(run) + ": " + e.case_name},
                   {"step_ms", number_or_null(1e3 * e.step_time_s)},
                   {"layers_ms", number_or_null(1e3 * e.layers_time_s)},
                   {"labels", labels},
                   {"fwd", fwd},
                   {"bwd_data", bwd_data},
                   {"bwd_weights", bwd_weights},
                   {"other", other},
                   {"flagged", flagged},
                   {"findings", e.findings}});
  }
  return out;
}

// Throughput against world size, one chart per data-parallel case (per-rank batch and settings): every
// run's records of that case at each world size, the one-process baselines as world size 1, and the
// ideal line (world size x the one-process throughput). Null when no record ran on more than one rank.
json scaling_model(const std::vector<ReportRun>& runs) {
  std::vector<std::string> order;
  std::map<std::string, std::map<int, std::vector<double>>> measured;  // key -> world -> throughputs
  std::map<std::string, std::vector<double>> singles;
  std::map<std::string, std::string> units;
  bool any = false;
  for (const auto& run : runs) {
    for (const auto& r : run.file.benchmarks) {
      if (!r.dist || !r.ok()) continue;
      const std::string k = join_key(r, false);
      if (!measured.count(k)) order.push_back(k);
      measured[k][r.dist->world_size].push_back(r.throughput);
      if (std::isfinite(r.dist->single_process_throughput)) singles[k].push_back(r.dist->single_process_throughput);
      units.emplace(k, r.unit);
      any = any || r.dist->world_size > 1;
    }
  }
  if (!any) return nullptr;
  json out = json::array();
  for (const auto& k : order) {
    auto& by_world = measured[k];
    const double single = singles.count(k) ? geometric_mean(singles[k]) : NAN;
    if (std::isfinite(single) && !by_world.count(1)) by_world[1].push_back(single);
    json worlds = json::array(), thr = json::array(), ideal = json::array(), eff = json::array();
    for (const auto& [n, values] : by_world) {
      const double t = geometric_mean(values);
      worlds.push_back(n);
      thr.push_back(number_or_null(t));
      ideal.push_back(number_or_null(single * n));
      eff.push_back(number_or_null(t / (single * n)));
    }
    out.push_back({{"title", k},
                   {"unit", units[k]},
                   {"worlds", worlds},
                   {"throughput", thr},
                   {"ideal", ideal},
                   {"efficiency", eff}});
  }
  return out;
}

// A single run: throughput per model as bars, one chart per unit (images/s, sequences/s), one series per
// precision/layout combination when those vary in the run. A case without a throughput stays an empty
// slot with an "OOM" (out of memory) or "error" mark; a case whose noise missed the target is marked too.
json throughput_model(const std::vector<ReportRun>& runs) {
  if (runs.size() != 1) return nullptr;
  const auto& records = runs[0].file.benchmarks;
  std::vector<std::string> units;
  for (const auto& r : records)
    if (std::find(units.begin(), units.end(), r.unit) == units.end()) units.push_back(r.unit);
  json out = json::array();
  for (const auto& unit : units) {
    std::set<std::string> precisions, layouts;
    for (const auto& r : records) {
      if (r.unit != unit) continue;
      precisions.insert(r.precision);
      layouts.insert(r.layout);
    }
    auto series_of = [&](const Record& r) {
      std::string s;
      if (precisions.size() > 1) s = r.precision;
      if (layouts.size() > 1) s += (s.empty() ? "" : " ") + r.layout;
      return s.empty() ? std::string("throughput") : s;
    };
    // The category: the case without its precision and layout.
    auto category_of = [](const Record& r) {
      std::string c = r.model;
      for (const auto& [k, v] : r.params) c += (c == r.model ? ":" : ",") + k + "=" + v;
      c += " b" + std::to_string(r.batch_size);
      if (r.optimizer != "sgd") c += " " + r.optimizer;
      if (r.forward_only) c += " fwd";
      if (r.threads > 0) c += " t" + std::to_string(r.threads);
      if (r.device != "cpu") c += " " + r.device;
      // A prediction is a category of its own per card, never a bar beside a measurement of its case.
      if (r.prediction) c += " on " + r.prediction->device_id + " (predicted)";
      return c;
    };
    std::vector<std::string> labels, series_names;
    std::map<std::pair<std::string, std::string>, const Record*> cell;
    for (const auto& r : records) {
      if (r.unit != unit) continue;
      const std::string c = category_of(r), sn = series_of(r);
      if (std::find(labels.begin(), labels.end(), c) == labels.end()) labels.push_back(c);
      if (std::find(series_names.begin(), series_names.end(), sn) == series_names.end()) series_names.push_back(sn);
      cell.emplace(std::make_pair(c, sn), &r);
    }
    json series = json::array(), marks = json::array();
    for (const auto& sn : series_names) {
      json data = json::array(), mark = json::array();
      for (const auto& c : labels) {
        auto it = cell.find({c, sn});
        const Record* r = it == cell.end() ? nullptr : it->second;
        data.push_back(r && (r->ok() || r->predicted()) ? number_or_null(r->throughput) : json(nullptr));
        std::string m;
        if (r && r->predicted())
          m = "predicted";
        else if (r && r->status == Status::oom)
          m = "OOM";
        else if (r && r->status == Status::error)
          m = "error";
        else if (r && noise_missed(*r))
          m = "noisy";
        mark.push_back(m.empty() ? json(nullptr) : json(m));
        if (!m.empty()) {
          const std::string what = m == "OOM"         ? "out of memory"
                                   : m == "noisy"     ? "noise above the target"
                                   : m == "predicted" ? "predicted, not measured (docs/prediction.md)"
                                                      : "error";
          marks.push_back(c + (series_names.size() > 1 ? " " + sn : "") + ": " + what);
        }
      }
      series.push_back({{"label", sn}, {"data", data}, {"marks", mark}});
    }
    out.push_back({{"unit", unit}, {"labels", labels}, {"series", series}, {"marks", marks}});
  }
  return out;
}

}  // namespace

bool noise_missed(const Record& r) { return r.noise_target_met.has_value() && !*r.noise_target_met; }

json report_model(const std::vector<ReportRun>& runs) {
  json m;
  json labels = json::array();
  for (const auto& r : runs) labels.push_back(series_label(r));
  m["runs"] = labels;
  m["speedup"] = speedup_model(runs);
  m["sweeps"] = sweeps_model(runs);
  m["ablation"] = ablation_model(runs);
  m["explain"] = explain_model(runs);
  m["scaling"] = scaling_model(runs);
  m["throughput"] = throughput_model(runs);
  m["memory"] = detail::memory_breakdown_model(runs);
  m["memory_fits"] = detail::memory_fit_model(runs);
  return m;
}

}  // namespace trainbench
