// The board as one self-contained page, in the report's style and on its script (report/html_report.h):
// the columns' machines, the speed-up chart, the sortable table with a history sparkline per cell, the
// largest batches and the flagged changes.
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "board/board.h"
#include "report/html_report.h"
#include "results/number_format.h"

namespace trainbench {

namespace {

using detail::html_escape;

// Per model, each column's geometric-mean speed-up over its cases with a speed-up: the report's chart.
nlohmann::json speedup_chart(const Board& b) {
  if (b.baseline < 0 || b.columns.size() < 2) return nullptr;
  std::vector<std::string> models;
  for (const auto& row : b.rows) {
    if (std::find(models.begin(), models.end(), row.model) == models.end()) models.push_back(row.model);
  }
  nlohmann::json series = nlohmann::json::array(), means = nlohmann::json::array();
  for (size_t c = 0; c < b.columns.size(); ++c) {
    if (int(c) == b.baseline) continue;
    nlohmann::json data = nlohmann::json::array(), counts = nlohmann::json::array();
    std::map<std::string, std::vector<double>> by_family;
    std::vector<double> all;
    for (const auto& m : models) {
      std::vector<double> ratios;
      for (const auto& row : b.rows) {
        if (row.model != m || !row.cells[c].speedup) continue;
        ratios.push_back(*row.cells[c].speedup);
        by_family[row.family].push_back(*row.cells[c].speedup);
      }
      all.insert(all.end(), ratios.begin(), ratios.end());
      data.push_back(ratios.empty() ? nlohmann::json(nullptr) : nlohmann::json(geometric_mean(ratios)));
      counts.push_back(ratios.size());
    }
    series.push_back({{"label", b.columns[c].label()}, {"data", data}, {"counts", counts}});
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [family, ratios] : by_family) rows.push_back({family_title(family), geometric_mean(ratios), ratios.size()});
    if (!all.empty()) rows.push_back({family_title("overall"), geometric_mean(all), all.size()});
    means.push_back({{"other", b.columns[c].label()}, {"rows", rows}});
  }
  return {{"base", b.columns[size_t(b.baseline)].label()}, {"labels", models}, {"series", series}, {"means", means}};
}

std::string columns_table(const Board& b) {
  std::string h = "<table class=\"ctx\"><thead><tr><th>column</th><th>device</th><th>LibTorch</th>"
                  "<th>runs read</th><th>latest run</th></tr></thead><tbody>\n";
  for (size_t c = 0; c < b.columns.size(); ++c) {
    const BoardColumn& col = b.columns[c];
    const std::string versions = fmt::format("{}", fmt::join(col.libtorch_versions, ", "));
    h += fmt::format("<tr><th>{}{}</th><td>{}</td><td>{}</td><td data-v=\"{}\">{}</td><td>{} ({})</td></tr>\n",
                     html_escape(col.label()), int(c) == b.baseline ? " (baseline)" : "",
                     html_escape(col.device_name), html_escape(versions), col.runs, col.runs, col.latest_run,
                     html_escape(col.latest_start));
  }
  return h + "</tbody></table>\n";
}

std::string cases_table(const Board& b) {
  std::string h = "<div class=\"scroll\"><table class=\"sortable board\"><thead><tr><th>case</th><th>unit</th>";
  for (size_t c = 0; c < b.columns.size(); ++c) {
    const std::string label = html_escape(b.columns[c].label());
    h += fmt::format("<th data-type=\"num\">{}</th>", label);
    if (int(c) != b.baseline && b.baseline >= 0) h += fmt::format("<th data-type=\"num\">× {}</th>", html_escape(b.columns[size_t(b.baseline)].label()));
    h += "<th>history</th>";
  }
  for (const auto& card : b.predicted)
    h += fmt::format("<th data-type=\"num\">{} (predicted)</th>", html_escape(card.id));
  h += "</tr></thead><tbody>\n";
  for (size_t r = 0; r < b.rows.size(); ++r) {
    const BoardRow& row = b.rows[r];
    h += "<tr><td>" + html_escape(row.key) + "</td><td>" + html_escape(row.unit) + "</td>";
    for (size_t c = 0; c < row.cells.size(); ++c) {
      const BoardCell& cell = row.cells[c];
      const BoardPoint* p = cell.latest();
      const bool base = int(c) == b.baseline;
      std::string tp = "<td></td>";
      if (p && p->ok()) {
        tp = fmt::format("<td data-v=\"{}\" title=\"run {}, noise ±{}%\">{}</td>", p->throughput, p->run_id,
                         format_significant(100.0 * p->noise, 2), format_significant(p->throughput));
      } else if (p) {
        tp = fmt::format("<td class=\"{}\">{}</td>", p->status, p->status == "oom" ? "-" : "error");
      }
      h += tp;
      if (!base && b.baseline >= 0) {
        if (cell.speedup) {
          const char* cls = cell.verdict == Verdict::faster ? "faster" : cell.verdict == Verdict::slower ? "slower" : "same";
          h += fmt::format("<td data-v=\"{}\" class=\"{}\">{}×</td>", *cell.speedup, cls, format_significant(*cell.speedup));
        } else {
          h += "<td></td>";
        }
      }
      const std::string changes = changes_text(cell);
      const bool slower = !cell.changes.changes.empty() && cell.changes.changes.back().ratio < 1.0;
      h += p ? fmt::format("<td class=\"hist{}\"{}><canvas class=\"spark\" width=\"120\" height=\"28\" data-row=\"{}\" "
                           "data-col=\"{}\"></canvas>{}</td>",
                           slower ? " regressed" : "", changes.empty() ? "" : " title=\"" + html_escape(changes) + "\"",
                           r, c, slower ? " ⚠" : "")
             : "<td></td>";
    }
    // Predicted cards: marked, with the interval in the title; never a speed-up or a history.
    for (const auto& p : row.predicted) {
      h += p ? fmt::format(
                   "<td class=\"predicted\" data-v=\"{}\" title=\"predicted, not measured: {} to {}{}\">~{}</td>",
                   p->throughput, format_significant(p->low), format_significant(p->high),
                   p->fits ? "" : "; does not fit the card", format_significant(p->throughput))
             : "<td></td>";
    }
    h += "</tr>\n";
  }
  return h + "</tbody></table></div>\n";
}

std::string memory_table(const Board& b) {
  if (b.memory.empty()) return "";
  std::string h = "<h2>Largest batch</h2>\n<p class=\"note\">Measured: the largest batch that trained where a "
                  "larger one ran out of memory. Predicted (~): <code>memory --fits</code>, with its interval "
                  "where the size lies beyond the measured batches.</p>\n<table class=\"sortable\"><thead><tr>"
                  "<th>workload</th>";
  for (const auto& c : b.columns) h += "<th>" + html_escape(c.label()) + "</th>";
  h += "</tr></thead><tbody>\n";
  for (size_t m = 0; m < b.memory.size(); ++m) {
    h += "<tr><td>" + html_escape(b.memory[m].workload) + "</td>";
    for (size_t c = 0; c < b.columns.size(); ++c) {
      h += "<td>" + html_escape(memory_text(b.memory[m].cells[c])) + "</td>";
    }
    h += "</tr>\n";
  }
  return h + "</tbody></table>\n";
}

std::string changes_table(const Board& b) {
  std::string h = "<h2>History</h2>\n<p class=\"note\">" + html_escape(rule_text(b)) +
                  ". " + std::to_string(b.series) + " series had runs enough to check.</p>\n";
  std::string rows;
  for (size_t r = 0; r < b.rows.size(); ++r) {
    for (size_t c = 0; c < b.columns.size(); ++c) {
      const std::string changes = changes_text(b.rows[r].cells[c]);
      if (changes.empty()) continue;
      rows += "<tr><td>" + html_escape(b.rows[r].key) + "</td><td>" + html_escape(b.columns[c].label()) +
              "</td><td>" + html_escape(changes) + "</td></tr>\n";
    }
  }
  if (rows.empty()) return h + "<p>No change flagged.</p>\n";
  return h + "<table class=\"sortable\"><thead><tr><th>case</th><th>column</th><th>changes</th></tr></thead><tbody>\n" +
         rows + "</tbody></table>\n";
}

// Sparklines: each cell's history, oldest left; gaps where a run had no throughput (red cross: out of
// memory), a red or green tick where a change of level starts, a hollow circle on a pending one.
const char* const kBoardScript = R"TB(
  var sparks = 0;
  document.querySelectorAll('canvas.spark').forEach(function (cv) {
    var cell = model.rows[+cv.dataset.row].cells[+cv.dataset.col];
    var h = cell.t, ctx = cv.getContext('2d'), W = cv.width, H = cv.height, pad = 3;
    var vals = h.filter(function (v) { return v !== null; });
    var lo = Math.min.apply(null, vals.length ? vals : [0]), hi = Math.max.apply(null, vals.length ? vals : [1]);
    // At least 10% of the level from bottom to top: a wobble of a few tenths of a percent stays flat, a
    // step of 10% or more fills the height.
    var mid = (hi + lo) / 2, span = Math.max(hi - lo, 0.1 * mid, 1e-9);
    lo = mid - span / 2; hi = mid + span / 2;
    function x(i) { return h.length === 1 ? W / 2 : pad + i * (W - 2 * pad) / (h.length - 1); }
    function y(v) { return H - pad - (v - lo) * (H - 2 * pad) / (hi - lo); }
    ctx.strokeStyle = '#1f77b4'; ctx.lineWidth = 1.5; ctx.beginPath();
    var open = false;
    h.forEach(function (v, i) {
      if (v === null) { open = false; return; }
      if (open) ctx.lineTo(x(i), y(v)); else ctx.moveTo(x(i), y(v));
      open = true;
    });
    ctx.stroke();
    ctx.fillStyle = '#1f77b4';
    h.forEach(function (v, i) {
      if (v !== null) { ctx.fillRect(x(i) - 1.5, y(v) - 1.5, 3, 3); return; }
      ctx.strokeStyle = '#d62728'; ctx.lineWidth = 1.5; ctx.beginPath();
      ctx.moveTo(x(i) - 3, H - 8); ctx.lineTo(x(i) + 3, H - 2); ctx.moveTo(x(i) + 3, H - 8); ctx.lineTo(x(i) - 3, H - 2);
      ctx.stroke();
    });
    cell.changes.forEach(function (c) {
      ctx.strokeStyle = c.ratio < 1 ? '#d62728' : '#2ca02c'; ctx.lineWidth = 1.5; ctx.beginPath();
      ctx.moveTo(x(c.index) - 2, 1); ctx.lineTo(x(c.index) - 2, H - 1); ctx.stroke();
    });
    if (cell.pending) {
      ctx.strokeStyle = '#8a6d00'; ctx.beginPath();
      ctx.arc(x(cell.pending.index), y(h[cell.pending.index]), 4, 0, 2 * Math.PI);
      ctx.stroke();
    }
    sparks++;
  });
  document.getElementById('tb-sparks').textContent = sparks;
)TB";

// What the page's script draws from: the speed-up chart, and per cell its throughputs (null: no
// throughput) with its changes. A point's run, date and revision are in the tables: a long history
// stays small.
nlohmann::json page_model(const Board& b) {
  auto change = [](const Change& ch) { return nlohmann::json{{"index", ch.at}, {"ratio", ch.ratio}}; };
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : b.rows) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& cell : row.cells) {
      if (!cell.latest()) {
        cells.push_back(nullptr);
        continue;
      }
      nlohmann::json t = nlohmann::json::array(), changes = nlohmann::json::array();
      for (const auto& p : cell.history) t.push_back(p.ok() ? nlohmann::json(p.throughput) : nlohmann::json(nullptr));
      for (const auto& ch : cell.changes.changes) changes.push_back(change(ch));
      cells.push_back({{"t", t},
                       {"changes", changes},
                       {"pending", cell.changes.pending ? change(*cell.changes.pending) : nlohmann::json(nullptr)}});
    }
    rows.push_back({{"cells", cells}});
  }
  return {{"rows", rows}, {"speedup", speedup_chart(b)}, {"sweeps", nlohmann::json::array()}};
}

}  // namespace

std::string board_html(const Board& b, const std::string& chartjs) {
  std::string body =
      "<h1>trainbench board</h1>\n<p class=\"sub\">" +
      html_escape(fmt::format("{}: {} column(s), {} case(s); each column's latest {} run(s) at most", b.store,
                              b.columns.size(), b.rows.size(), b.options.last)) +
      "</p>\n<style>td.oom, td.error { color: #d62728; text-align: center; } td.faster { color: #2ca02c; } "
      "td.slower { color: #d62728; } td.regressed { background: #fdecea; } canvas.spark { "
      "vertical-align: middle; } td.hist { white-space: nowrap; } td.predicted { font-style: italic; color: #666; }"
      "</style>\n";
  body += "<h2>Columns</h2>\n" + columns_table(b);
  body += "<div id=\"charts\"></div>\n";
  body += "<h2>Cases</h2>\n<p class=\"note\">A cell is the latest measurement of the case on that machine and "
          "device; - out of memory. The speed-up is green (faster) or red (slower) where it lies beyond the noise of "
          "both (compare's rule), black within it. History: each run of the case there, oldest left; a tick where a "
          "change of level starts, ⚠ where the latest change was a slowdown (hover for the changes). Click a column "
          "title to sort. <span id=\"tb-sparks\" hidden></span></p>\n";
  body += cases_table(b);
  body += memory_table(b);
  body += changes_table(b);
  return detail::fill_report_template("trainbench board: " + b.store, page_model(b).dump(), body, chartjs,
                                      kBoardScript);
}

}  // namespace trainbench
