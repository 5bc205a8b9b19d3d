// The page of the HTML report: CSS, the data model as JSON, Chart.js inlined, and the script that
// draws the charts and sorts the table. After drawing, the script writes a status line into the hidden
// element #tb-status ("charts=N canvases=N drawn=N errors=N"): the headless-browser test reads it.
#include <string>

#include "report/html_report.h"

namespace trainbench::detail {

namespace {

const char* const kHead = R"TB(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<script>
// Count every script error (and console.error) so a test can see that the page drew cleanly.
window.tbErrors = 0;
window.addEventListener('error', function () { window.tbErrors++; if (window.tbStatus) window.tbStatus(); });
(function () {
  var orig = console.error;
  console.error = function () { window.tbErrors++; return orig.apply(console, arguments); };
})();
</script>
<style>
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px; color: #222; }
h1 { margin: 0 0 4px; font-size: 24px; } h2 { margin-top: 32px; border-bottom: 1px solid #ddd; }
h3 { margin: 8px 0 4px; font-size: 15px; font-weight: 600; font-family: ui-monospace, monospace; }
.sub, .note, .caption { color: #555; } .caption { font-size: 12px; margin: 2px 0 0; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
thead th { background: #f4f4f4; }
table.ctx tbody th { background: #fafafa; font-weight: 600; white-space: nowrap; }
table.sortable thead th { cursor: pointer; user-select: none; white-space: nowrap; }
table.sortable thead th.asc::after { content: " \25B2"; } table.sortable thead th.desc::after { content: " \25BC"; }
td[data-v] { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(620px, 1fr)); gap: 16px; }
.chart { border: 1px solid #e4e4e4; border-radius: 6px; padding: 8px 12px; }
.canvas-wrap { position: relative; height: 320px; }
#tb-status { display: none; }
.scroll { overflow-x: auto; } td[title] { text-decoration: underline dotted; cursor: help; }
</style>
</head>
<body>
)TB";

const char* const kScript = R"TB(
<script>
(function () {
  'use strict';
  var model = JSON.parse(document.getElementById('tb-model').textContent);
  var palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f'];
  function color(i) { return palette[i % palette.length]; }
  function fade(hex) { return hex + '88'; }
  // Numbers for people: three significant figures.
  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    if (v === 0) return '0';
    return String(Number(Number(v).toPrecision(3)));
  }
  var charts = [];
  var root = document.getElementById('charts');
  function section(title, note) {
    var h = document.createElement('h2'); h.textContent = title; root.appendChild(h);
    if (note) { var p = document.createElement('p'); p.className = 'note'; p.textContent = note; root.appendChild(p); }
    var g = document.createElement('div'); g.className = 'grid'; root.appendChild(g); return g;
  }
  function addChart(parent, title, config, caption, height) {
    var box = document.createElement('div'); box.className = 'chart';
    var h = document.createElement('h3'); h.textContent = title; box.appendChild(h);
    var wrap = document.createElement('div'); wrap.className = 'canvas-wrap';
    if (height) wrap.style.height = height + 'px';
    var canvas = document.createElement('canvas'); wrap.appendChild(canvas); box.appendChild(wrap);
    if (caption) { var p = document.createElement('p'); p.className = 'caption'; p.textContent = caption; box.appendChild(p); }
    parent.appendChild(box);
    config.options = config.options || {};
    config.options.animation = false;
    config.options.responsive = true;
    config.options.maintainAspectRatio = false;
    try { charts.push(new Chart(canvas, config)); } catch (e) { window.tbErrors++; console.log(e); }
  }
  function axisTitle(text) { return { display: true, text: text }; }
  function tooltipWith(suffix) {
    return { callbacks: { label: function (ctx) {
      return ctx.dataset.label + ': ' + fmt(ctx.parsed.y) + suffix(ctx);
    } } };
  }

  // A dashed line at 1.0 across the whole plot: as fast as BASE.
  var oneLine = { id: 'oneLine', afterDatasetsDraw: function (chart) {
    var y = chart.scales.y.getPixelForValue(1), a = chart.chartArea, ctx = chart.ctx;
    ctx.save(); ctx.strokeStyle = '#222'; ctx.lineWidth = 1.5; ctx.setLineDash([6, 4]);
    ctx.beginPath(); ctx.moveTo(a.left, y); ctx.lineTo(a.right, y); ctx.stroke(); ctx.restore();
  } };

  // A single run: throughput per model. Cases without a bar carry a mark on the axis ("OOM", "error");
  // bars of cases whose noise missed the target carry "noisy" above them.
  var markLabels = { id: 'markLabels', afterDatasetsDraw: function (chart) {
    var ctx = chart.ctx, a = chart.chartArea;
    ctx.save(); ctx.font = 'bold 11px sans-serif'; ctx.textAlign = 'center';
    chart.data.datasets.forEach(function (ds, di) {
      var meta = chart.getDatasetMeta(di);
      (ds.marks || []).forEach(function (m, i) {
        if (!m || !meta.data[i]) return;
        var x = meta.data[i].x, y = m === 'noisy' ? meta.data[i].y - 4 : a.bottom - 4;
        if (!isFinite(x)) x = chart.scales.x.getPixelForValue(i);
        if (!isFinite(y)) y = a.bottom - 4;
        ctx.fillStyle = m === 'noisy' ? '#8a6d00' : '#d62728';
        ctx.fillText(m === 'noisy' ? '~' : m, x, y);
      });
    });
    ctx.restore();
  } };
  (model.throughput || []).forEach(function (tp, k) {
    var gt = section(k === 0 ? 'Throughput per model' : 'Throughput per model (' + tp.unit + ')',
      k === 0 ? 'One bar per case (series: precision and layout where they vary). OOM: out of memory, no ' +
      'throughput; ~: the noise of the median stayed above the --max-noise target.' : '');
    addChart(gt, tp.unit, {
      type: 'bar',
      data: { labels: tp.labels, datasets: tp.series.map(function (ser, i) {
        return { label: ser.label, data: ser.data, marks: ser.marks, backgroundColor: color(i) };
      }) },
      options: { scales: { y: { beginAtZero: true, title: axisTitle(tp.unit) }, x: { ticks: { autoSkip: false } } },
                 plugins: { tooltip: tooltipWith(function (ctx) {
                   var m = ctx.dataset.marks[ctx.dataIndex];
                   return ' ' + tp.unit + (m === 'noisy' ? ' (noise above target)' : ''); }) } },
      plugins: [markLabels]
    }, tp.marks.length ? tp.marks.join('; ') : '');
  });

  if (model.speedup) {
    var s = model.speedup;
    var g = section('Speed-up over BASE', 'Bars: OTHER / BASE throughput per model (geometric mean over the ' +
      'model\'s cases present in both runs); the dashed line at 1.0 is BASE. BASE: ' + s.base);
    addChart(g, 'speed-up per model', {
      type: 'bar',
      data: { labels: s.labels, datasets: s.series.map(function (ser, i) {
        return { label: ser.label, data: ser.data, backgroundColor: color(i + 1), counts: ser.counts };
      }) },
      options: { scales: { y: { beginAtZero: true, suggestedMax: 1.2, title: axisTitle('OTHER / BASE') } },
        plugins: { tooltip: tooltipWith(function (ctx) {
          return '\u00d7 (' + ctx.dataset.counts[ctx.dataIndex] + ' case(s))'; }) } },
      plugins: [oneLine]
    }, s.means.map(function (m) {
      return m.other + ': ' + m.rows.map(function (r) { return r[0] + ' ' + fmt(r[1]) + '\u00d7 (' + r[2] + ')'; }).join(', ');
    }).join(' | '));
  }

  if ((model.sweeps || []).length) {
    var gs = section('Throughput against batch size', 'One line per run; red crosses on the axis: out of memory ' +
      '(no throughput). Each chart is one workload run at several batch sizes.');
    model.sweeps.forEach(function (sw) {
      var datasets = [];
      sw.series.forEach(function (ser, i) {
        datasets.push({ label: ser.label, data: ser.data, borderColor: color(i), backgroundColor: color(i),
                        spanGaps: false, tension: 0, pointRadius: 3 });
        if (ser.oom.some(function (v) { return v !== null; }))
          datasets.push({ label: ser.label + ' OOM', data: ser.oom, showLine: false, pointStyle: 'crossRot',
                          pointRadius: 9, pointBorderWidth: 3, borderColor: '#d62728', backgroundColor: '#d62728' });
      });
      addChart(gs, sw.title, {
        type: 'line', data: { labels: sw.batches.map(String), datasets: datasets },
        options: { scales: { x: { title: axisTitle('batch size') },
                             y: { beginAtZero: true, title: axisTitle(sw.unit) } },
                   plugins: { tooltip: tooltipWith(function (ctx) {
                     return / OOM$/.test(ctx.dataset.label) ? ' (out of memory)' : ' ' + sw.unit; }) } }
      }, sw.oom.length ? 'out of memory: ' + sw.oom.join('; ') : '');
    });
  }

  if (model.ablation) {
    var ab = model.ablation;
    var ga = section(ab.title, ab.workload + ' variants: throughput (left axis, ' +
      'solid) beside achieved GFLOP/s (right axis, light).');
    var datasets = [];
    ab.series.forEach(function (ser, i) {
      datasets.push({ label: ser.label + ' ' + ab.unit, data: ser.throughput, yAxisID: 'y', backgroundColor: color(i) });
      datasets.push({ label: ser.label + ' GFLOP/s', data: ser.gflops, yAxisID: 'y2', backgroundColor: fade(color(i)),
                      borderColor: color(i), borderWidth: 1 });
    });
    addChart(ga, ab.workload + ' ablation', {
      type: 'bar', data: { labels: ab.labels, datasets: datasets },
      options: { scales: { y: { beginAtZero: true, position: 'left', title: axisTitle(ab.unit) },
                           y2: { beginAtZero: true, position: 'right', title: axisTitle('GFLOP/s'),
                                 grid: { drawOnChartArea: false } } },
                 plugins: { tooltip: tooltipWith(function () { return ''; }) } }
    });
  }

  (model.explain || []).forEach(function (ex) {
    var ge = section('Where the step goes: ' + ex.title, 'trainbench explain: each layer shape timed alone ' +
      '(count × forward, backward-data, backward-weights, in ms) against the measured step of ' + fmt(ex.step_ms) +
      ' ms; the layers add up to ' + fmt(ex.layers_ms) + ' ms. ⚠ marks a flagged layer.');
    addChart(ge, 'time per step by layer', {
      type: 'bar',
      data: { labels: ex.labels, datasets: [
        { label: 'forward', data: ex.fwd, backgroundColor: color(0), stack: 's' },
        { label: 'backward-data', data: ex.bwd_data, backgroundColor: color(1), stack: 's' },
        { label: 'backward-weights', data: ex.bwd_weights, backgroundColor: color(2), stack: 's' },
        { label: 'other', data: ex.other, backgroundColor: '#999', stack: 's' }] },
      options: { indexAxis: 'y', scales: { x: { stacked: true, title: axisTitle('ms per step') },
                                           y: { stacked: true, ticks: { autoSkip: false } } },
                 plugins: { tooltip: { callbacks: { label: function (ctx) {
                   return ctx.dataset.label + ': ' + fmt(ctx.parsed.x) + ' ms'; } } } } }
    }, ex.findings.join(' | '), 60 + 20 * ex.labels.length);
  });

  if (model.scaling) {
    var gd = section('Throughput against world size (data parallel)', 'Global throughput of each data-parallel ' +
      'case (all ranks\' samples over the slowest rank\'s median step); world size 1 is the same case alone in one ' +
      'process; dashed: perfect scaling from it.');
    model.scaling.forEach(function (sc) {
      addChart(gd, sc.title, {
        type: 'line', data: { labels: sc.worlds.map(String), datasets: [
          { label: 'measured', data: sc.throughput, borderColor: color(0), backgroundColor: color(0), tension: 0,
            pointRadius: 4 },
          { label: 'ideal', data: sc.ideal, borderColor: '#888', backgroundColor: '#888', borderDash: [6, 4],
            pointRadius: 0, tension: 0 }] },
        options: { scales: { x: { title: axisTitle('world size (processes)') },
                             y: { beginAtZero: true, title: axisTitle(sc.unit) } },
                   plugins: { tooltip: tooltipWith(function (ctx) {
                     var e = sc.efficiency[ctx.dataIndex];
                     return ' ' + sc.unit + (ctx.datasetIndex === 0 && e !== null ? ' (efficiency ' + fmt(100 * e) + '%)' : '');
                   }) } }
      }, 'scaling efficiency: ' + sc.worlds.map(function (n, i) {
        var e = sc.efficiency[i]; return n + ': ' + (e === null ? '-' : fmt(100 * e) + '%'); }).join(', '));
    });
  }

@PAGE_SCRIPT@
  // The sortable table: click a column title; click again to reverse.
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var asc = !th.classList.contains('asc');
        Array.prototype.forEach.call(heads, function (h) { h.classList.remove('asc', 'desc'); });
        th.classList.add(asc ? 'asc' : 'desc');
        var numeric = th.dataset.type === 'num';
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        function key(row) {
          var td = row.cells[col];
          if (!numeric) return td.textContent;
          var v = td.dataset.v === undefined ? NaN : parseFloat(td.dataset.v);
          return v;
        }
        rows.sort(function (a, b) {
          var x = key(a), y = key(b);
          if (numeric) {
            if (isNaN(x) && isNaN(y)) return 0;
            if (isNaN(x)) return 1;   // cells without a number go last either way
            if (isNaN(y)) return -1;
            return asc ? x - y : y - x;
          }
          return asc ? x.localeCompare(y) : y.localeCompare(x);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // Status for tests: how many charts were made, and how many canvases hold drawn pixels.
  window.tbStatus = function () {
    var canvases = document.querySelectorAll('canvas'), drawn = 0;
    canvases.forEach(function (c) {
      try {
        var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        for (var i = 3; i < d.length; i += 4) if (d[i] !== 0) { drawn++; break; }
      } catch (e) { window.tbErrors++; }
    });
    document.getElementById('tb-status').textContent = 'charts=' + charts.length + ' canvases=' + canvases.length +
      ' drawn=' + drawn + ' errors=' + window.tbErrors;
  };
  window.setTimeout(window.tbStatus, 100);
})();
</script>
</body>
</html>
)TB";

std::string replace_once(std::string s, const std::string& hole, const std::string& with) {
  const auto pos = s.find(hole);
  if (pos != std::string::npos) s.replace(pos, hole.size(), with);
  return s;
}

// Text inside <script> ends at the first "</script": keep JSON and the library from closing it early.
std::string script_safe(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::string json_script_safe(const std::string& json) {
  // Inside JSON text these bytes only occur within strings, where \uXXXX means the same character: no
  // content can then end the script element, open a comment or tag, or (U+2028/U+2029) break a parser
  // that treats them as line ends.
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
             (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string fill_report_template(const std::string& title, const std::string& model_json, const std::string& body_html,
                                 const std::string& chartjs, const char* page_script) {
  std::string page = replace_once(kHead, "@TITLE@", html_escape(title));
  page += body_html;
  page += "<pre id=\"tb-status\">charts=? drawn=? errors=?</pre>\n";
  page += "<script type=\"application/json\" id=\"tb-model\">" + json_script_safe(model_json) + "</script>\n";
  page += "<script>\n" + script_safe(chartjs) + "\n</script>\n";
  page += replace_once(kScript, "@PAGE_SCRIPT@", page_script ? page_script : memory_charts_script());
  return page;
}

}  // namespace trainbench::detail
