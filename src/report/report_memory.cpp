// The memory charts of the HTML report (docs/memory.md): where each case's bytes go, as a stacked bar
// (parameters, gradients, optimizer state, all-reduce buckets, activations at the measured batch, other), and for
// `trainbench memory` runs the fitted peak against the batch with each --fits size as a horizontal
// rule. The data are computed here; the script fragment below only draws them.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "memory/fit.h"
#include "report/html_report.h"
#include "results/number_format.h"
#include "results/printer_memory.h"

namespace trainbench::detail {

namespace {

using nlohmann::json;

constexpr double kMiB = 1024.0 * 1024.0;

// The bar's name: the case descriptor, with the run's file name when the report has several runs.
std::string case_label(const ReportRun& run, const Record& r, bool several_runs) {
  return several_runs ? run.label + ": " + r.name : r.name;
}

}  // namespace

json memory_breakdown_model(const std::vector<ReportRun>& runs) {
  json labels = json::array(), params = json::array(), grads = json::array(), optim = json::array(),
       comm = json::array(), acts = json::array(), other = json::array(), peaks = json::array();
  for (const auto& run : runs) {
    // A `memory` run records each measured batch; the record carrying the fit stands for its case.
    std::set<std::string> fitted;
    for (const auto& r : run.file.benchmarks)
      if (r.ok() && r.memory && r.memory->fit) fitted.insert(sweep_key(r));
    for (const auto& r : run.file.benchmarks) {
      if (!r.ok() || !r.memory) continue;
      const MemoryInfo& m = *r.memory;
      if (!m.fit && fitted.count(sweep_key(r))) continue;
      const double p = static_cast<double>(std::max<int64_t>(0, m.parameters_bytes));
      const double g = static_cast<double>(std::max<int64_t>(0, m.gradients_bytes));
      const double o = static_cast<double>(std::max<int64_t>(0, m.optimizer_bytes));
      const double c = static_cast<double>(std::max<int64_t>(0, m.comm_buffer_bytes));  // data-parallel only
      const double per_sample = std::isfinite(m.activations_bytes_per_sample) ? m.activations_bytes_per_sample : 0.0;
      const double a = std::max(0.0, per_sample * static_cast<double>(r.batch_size));
      // What the peak holds beyond those (workspaces, the fit's intercept above the persistent state);
      // never negative: at the moment of the peak not every gradient need be live (docs/memory.md).
      const double rest = std::max(0.0, static_cast<double>(m.peak_bytes) - p - g - o - c - a);
      labels.push_back(case_label(run, r, runs.size() > 1));
      params.push_back(p / kMiB);
      grads.push_back(g / kMiB);
      optim.push_back(o / kMiB);
      comm.push_back(c / kMiB);
      acts.push_back(a / kMiB);
      other.push_back(rest / kMiB);
      peaks.push_back(static_cast<double>(m.peak_bytes) / kMiB);
    }
  }
  if (labels.empty()) return nullptr;
  return {{"labels", labels},     {"parameters", params}, {"gradients", grads}, {"optimizer", optim},
          {"comm_buffers", comm}, {"activations", acts},  {"other", other},     {"peak", peaks}};
}

json memory_fit_model(const std::vector<ReportRun>& runs) {
  json out = json::array();
  for (const auto& run : runs) {
    for (const auto& r : run.file.benchmarks) {
      if (!r.ok() || !r.memory || !r.memory->fit) continue;
      const MemoryInfo& m = *r.memory;
      const MemoryFit& f = *m.fit;
      json points = json::array();
      int64_t x_max = 1;
      for (size_t i = 0; i < f.batches.size() && i < f.peaks.size(); ++i) {
        points.push_back({{"x", f.batches[i]}, {"y", static_cast<double>(f.peaks[i]) / kMiB}});
        x_max = std::max(x_max, f.batches[i] * 2);
      }
      json rules = json::array();
      std::string largest;
      for (const auto& p : m.predictions) {
        rules.push_back({{"label", format_size(p.size_bytes)},
                         {"y", static_cast<double>(p.size_bytes) / kMiB},
                         {"largest_batch", p.largest_batch}});
        if (p.largest_batch > 0) x_max = std::max(x_max, p.largest_batch + p.largest_batch / 10 + 1);
        largest += fmt::format("{}{}: {}{}", largest.empty() ? "" : ", ", format_size(p.size_bytes), p.largest_batch,
                               p.trained_under_limit > 0 ? " (trained under it)" : "");
      }
      x_max = std::min<int64_t>(x_max, memory::kMaxPredictedBatch);
      // The fitted line across the whole axis: two points make it.
      json line = json::array({{{"x", 0}, {"y", memory::fitted_peak(f, 0) / kMiB}},
                               {{"x", x_max}, {"y", memory::fitted_peak(f, x_max) / kMiB}}});
      std::string caption = fmt::format("fit ({}): {} + {} × batch", f.basis,
                                        format_bytes(static_cast<int64_t>(std::llround(f.fixed_bytes))),
                                        format_bytes(static_cast<int64_t>(std::llround(f.per_sample_bytes))));
      if (!std::isnan(f.linearity_error)) {
        caption +=
            "; " + off_the_line(f) + (f.linear ? "" : " (NOT LINEAR: predictions from the line alone are rough)");
      }
      if (!largest.empty()) caption += "; largest batch per size: " + largest;
      out.push_back({{"title", case_label(run, r, runs.size() > 1)},
                     {"basis", f.basis},
                     {"points", points},
                     {"line", line},
                     {"rules", rules},
                     {"x_max", x_max},
                     {"caption", caption}});
    }
  }
  return out;
}

// Drawn inside the page's script (html_template.cpp), with its helpers section, addChart, color, fmt.
const char* memory_charts_script() {
  return R"TB(
  if (model.memory) {
    var mb = model.memory;
    var gm = section('Where the memory goes', 'Tensor bytes of each case (MiB): parameters and buffers, ' +
      'gradients, optimizer state, the all-reduce buckets (data-parallel runs), activations at the measured batch ' +
      '(per sample × batch) and the rest of the ' +
      'measured peak (workspaces; for a fit, its intercept above the persistent state). trainbench memory measures them.');
    var parts = [['parameters', 'parameters'], ['gradients', 'gradients'], ['optimizer state', 'optimizer'],
                 ['all-reduce buckets', 'comm_buffers'], ['activations', 'activations'], ['other', 'other']];
    addChart(gm, 'memory per case', {
      type: 'bar',
      data: { labels: mb.labels, datasets: parts.map(function (p, i) {
        return { label: p[0], data: mb[p[1]], backgroundColor: p[1] === 'other' ? '#999' : color(i), stack: 'm' };
      }) },
      options: { indexAxis: 'y', scales: { x: { stacked: true, beginAtZero: true, title: axisTitle('MiB') },
                                           y: { stacked: true, ticks: { autoSkip: false } } },
                 plugins: { tooltip: { callbacks: {
                   label: function (ctx) { return ctx.dataset.label + ': ' + fmt(ctx.parsed.x) + ' MiB'; },
                   footer: function (items) { return 'measured peak: ' + fmt(mb.peak[items[0].dataIndex]) + ' MiB'; }
                 } } } }
    }, '', 80 + 28 * mb.labels.length);
  }

  if (model.memory_fits && model.memory_fits.length) {
    var gf = section('Peak memory against batch', 'Measured peaks (points) and the fitted line of what a memory ' +
      'limit sees; dashed: each --fits size, where the line crosses it is the largest batch that fits.');
    model.memory_fits.forEach(function (mf) {
      var datasets = [
        { label: 'measured', data: mf.points, showLine: false, pointRadius: 5, borderColor: color(0),
          backgroundColor: color(0) },
        { label: 'fit (' + mf.basis + ')', data: mf.line, showLine: true, pointRadius: 0, borderColor: color(0),
          backgroundColor: color(0), tension: 0 }];
      mf.rules.forEach(function (rule, i) {
        datasets.push({ label: rule.label + ' (batch ' + rule.largest_batch + ')',
                        data: [{ x: 0, y: rule.y }, { x: mf.x_max, y: rule.y }], showLine: true, pointRadius: 0,
                        borderDash: [6, 4], borderWidth: 1.5, borderColor: color(i + 1), backgroundColor: color(i + 1) });
      });
      addChart(gf, mf.title, {
        type: 'scatter', data: { datasets: datasets },
        options: { scales: { x: { type: 'linear', min: 0, max: mf.x_max, title: axisTitle('batch size') },
                             y: { beginAtZero: true, title: axisTitle('MiB') } },
                   plugins: { tooltip: { callbacks: { label: function (ctx) {
                     return ctx.dataset.label + ': ' + fmt(ctx.parsed.y) + ' MiB at batch ' + fmt(ctx.parsed.x); } } } } }
      }, mf.caption);
    });
  }
)TB";
}

}  // namespace trainbench::detail
