// The board's printers: Markdown (the study's table, the largest batches, the changes), CSV (one line
// per case and column) and JSON (everything, for scripts and the HTML page).
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "board/board.h"
#include "results/number_format.h"
#include "results/printer.h"
#include "results/text_table.h"

namespace trainbench {

namespace {

std::string percent_change(double ratio) {
  const double pct = 100.0 * (ratio - 1.0);
  return fmt::format("{}{}%", pct >= 0 ? "+" : "\u2212", format_significant(std::fabs(pct), 2));
}

const char* verdict_mark(Verdict v) {
  switch (v) {
    case Verdict::faster: return " \u25B2";
    case Verdict::slower: return " \u25BC";
    case Verdict::same: return " =";
    case Verdict::none: return "";
    case Verdict::predicted: return " (predicted)";
  }
  return "";
}

std::string column_title(const BoardColumn& c) {
  return fmt::format("{} ({}; LibTorch {})", c.label(), c.device_name,
                     c.libtorch_versions.empty() ? "-" : fmt::format("{}", fmt::join(c.libtorch_versions, ", ")));
}

// A cell for people: "123 images/s (4.5× ▲)", "-" for out of memory, "error", "" when not measured.
std::string cell_text(const BoardRow& row, const BoardCell& cell, bool baseline) {
  const BoardPoint* p = cell.latest();
  if (!p) return "";
  if (p->status == "oom") return "-";
  if (!p->ok()) return "error";
  std::string s = format_significant(p->throughput);
  if (cell.speedup && !baseline) s += fmt::format(" ({}\u00d7{})", format_significant(*cell.speedup), verdict_mark(cell.verdict));
  // The case's latest change of level was a slowdown: it is still at the lower level.
  if (!cell.changes.changes.empty() && cell.changes.changes.back().ratio < 1.0) s += " \u26A0";
  return s;
}

std::string point_where(const BoardPoint& p) {
  return fmt::format("run {} ({}, {})", p.run_id, p.start_time.substr(0, 10), p.git_revision.substr(0, 12));
}

std::string change_text(const BoardCell& cell, const Change& ch, bool pending) {
  return fmt::format("{} {} at {}{} (threshold \u00b1{})", ch.ratio < 1.0 ? "slower" : "faster",
                     percent_change(ch.ratio), point_where(cell.history[ch.at]),
                     pending ? ", the latest run alone: not yet held" : "",
                     format_significant(100.0 * ch.threshold, 2) + "%");
}

}  // namespace

std::string memory_text(const BoardMemoryCell& m) {
  std::vector<std::string> parts;
  if (m.smallest_oom == m.largest_ok + 1) parts.push_back(std::to_string(m.largest_ok));
  else if (m.smallest_oom) parts.push_back(fmt::format("{} \u2264 largest < {}", m.largest_ok, m.smallest_oom));
  for (const auto& k : m.under_limit) {
    if (k.smallest_oom == k.largest_ok + 1) {
      parts.push_back(fmt::format("{} under {}", k.largest_ok, format_size(k.limit_bytes)));
    } else if (k.smallest_oom) {
      parts.push_back(
          fmt::format("{} \u2264 largest < {} under {}", k.largest_ok, k.smallest_oom, format_size(k.limit_bytes)));
    }
  }
  for (const auto& p : m.predicted) {
    // "~": from the fitted line; a batch that trained under the size itself is a measurement.
    std::string s = fmt::format("{}{} at {}", p.tried ? "" : "~", p.batch, format_size(p.size_bytes));
    if (p.low || p.high) s += fmt::format(" [{}, {}]", p.low, p.high);
    parts.push_back(s);
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string changes_text(const BoardCell& cell) {
  std::vector<std::string> parts;
  for (const auto& ch : cell.changes.changes) parts.push_back(change_text(cell, ch, false));
  if (cell.changes.pending) parts.push_back(change_text(cell, *cell.changes.pending, true));
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string rule_text(const Board& b) {
  return fmt::format(
      "a change is flagged when {} runs in a row differ from the median of up to {} runs before them (at least {}) "
      "by more than {}\u00d7 the noise and {}% (docs/methodology.md, \"History and regressions\")",
      b.rule.hold, b.rule.lookback, b.rule.min_before, format_significant(b.rule.k), format_significant(100 * b.rule.floor));
}

std::string predicted_text(const std::optional<BoardPredictedCell>& p) {
  if (!p) return "";
  return fmt::format("~{} [{}, {}]{}", format_significant(p->throughput, 3), format_significant(p->low, 3),
                     format_significant(p->high, 3), p->fits ? "" : " \u2717");
}

std::string board_markdown(const Board& b) {
  std::string out = fmt::format("# trainbench board: {}\n\n", b.store);
  if (b.columns.empty()) return out + "No runs in the store.\n";
  out += fmt::format(
      "Each column: a machine and device, its latest {} runs at most; a cell is the latest measurement of the case "
      "there. Speed-ups against {} (\u25B2 faster, \u25BC slower, = within the noise of both); - out of memory; "
      "\u26A0 the latest change in the case's history was a slowdown.\n\n",
      b.options.last, b.columns[size_t(b.baseline)].label());
  std::vector<TextColumn> cols = {{"case"}};
  for (size_t c = 0; c < b.columns.size(); ++c) {
    cols.push_back({column_title(b.columns[c]) + (int(c) == b.baseline ? " (baseline)" : ""), 0, true});
  }
  for (const auto& card : b.predicted) cols.push_back({card.id + " (predicted)", 0, true});
  out += markdown_header(cols);
  for (const auto& row : b.rows) {
    std::vector<std::string> cells = {row.key + (row.unit.empty() ? "" : " (" + row.unit + ")")};
    for (size_t c = 0; c < row.cells.size(); ++c) cells.push_back(cell_text(row, row.cells[c], int(c) == b.baseline));
    for (const auto& p : row.predicted) cells.push_back(predicted_text(p));
    out += markdown_line(cells);
  }
  if (!b.predicted.empty()) {
    out +=
        "\nPredicted columns are not measurements: `trainbench predict`'s spec-sheet estimate with its interval "
        "[low, high] (docs/prediction.md); \u2717 the batch does not fit the card.\n";
  }
  if (!b.memory.empty()) {
    out += "\n## Largest batch\n\nMeasured: the largest batch that trained, where a larger one ran out of memory. "
           "Predicted: `memory --fits` (its interval where the size lies beyond the measured batches).\n\n";
    std::vector<TextColumn> mcols = {{"workload"}};
    for (const auto& c : b.columns) mcols.push_back({c.label()});
    out += markdown_header(mcols);
    for (const auto& m : b.memory) {
      std::vector<std::string> cells = {m.workload};
      for (const auto& mc : m.cells) cells.push_back(memory_text(mc));
      out += markdown_line(cells);
    }
  }
  out += "\n## History\n\n";
  std::vector<std::vector<std::string>> changed;
  for (const auto& row : b.rows) {
    for (size_t c = 0; c < row.cells.size(); ++c) {
      const std::string s = changes_text(row.cells[c]);
      if (!s.empty()) changed.push_back({row.key, b.columns[c].label(), std::to_string(row.cells[c].history.size()), s});
    }
  }
  out += fmt::format("Rule: {}. {} series had runs enough to check ({} or more).\n\n", rule_text(b), b.series,
                     b.rule.min_before + b.rule.hold);
  if (changed.empty()) return out + "No change flagged.\n";
  out += markdown_header({{"case"}, {"column"}, {"runs", 0, true}, {"changes"}});
  for (const auto& line : changed) out += markdown_line(line);
  return out;
}

std::string board_csv(const Board& b) {
  std::string out =
      "case,model,batch_size,precision,layout,machine,device,device_name,libtorch_version,run,start_time,"
      "git_revision,status,throughput,unit,noise,speedup,verdict,runs,changes,last_change,last_change_run,"
      "pending_change\n";
  for (const auto& row : b.rows) {
    for (size_t c = 0; c < row.cells.size(); ++c) {
      const BoardCell& cell = row.cells[c];
      const BoardPoint* p = cell.latest();
      if (!p) continue;
      const BoardColumn& col = b.columns[c];
      const Change* last = cell.changes.changes.empty() ? nullptr : &cell.changes.changes.back();
      const std::vector<std::string> cells = {
          row.key, row.model, std::to_string(row.batch_size), row.precision, row.layout, col.hostname, col.device,
          col.device_name, p->libtorch_version, std::to_string(p->run_id), p->start_time, p->git_revision, p->status,
          p->ok() ? format_round_trip(p->throughput) : "", row.unit, p->ok() ? format_round_trip(p->noise) : "",
          cell.speedup ? format_round_trip(*cell.speedup) : "", cell.verdict == Verdict::none ? "" : to_string(cell.verdict),
          std::to_string(cell.history.size()), std::to_string(cell.changes.changes.size()),
          last ? format_round_trip(last->ratio) : "", last ? std::to_string(cell.history[last->at].run_id) : "",
          cell.changes.pending ? format_round_trip(cell.changes.pending->ratio) : ""};
      for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + csv_quote(cells[i]);
      out += "\n";
    }
    // A predicted card: machine "predicted", status predicted, no speed-up, no history.
    for (size_t c = 0; c < row.predicted.size(); ++c) {
      const auto& p = row.predicted[c];
      if (!p) continue;
      const auto& card = b.predicted[c];
      const std::vector<std::string> cells = {row.key,
                                              row.model,
                                              std::to_string(row.batch_size),
                                              row.precision,
                                              row.layout,
                                              "predicted",
                                              card.id,
                                              card.name,
                                              "",
                                              "",
                                              "",
                                              "",
                                              "predicted",
                                              format_round_trip(p->throughput),
                                              row.unit,
                                              "",
                                              "",
                                              "",
                                              "0",
                                              "0",
                                              "",
                                              "",
                                              ""};
      for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + csv_quote(cells[i]);
      out += "\n";
    }
  }
  return out;
}

namespace {

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json change_json(const BoardCell& cell, const Change& ch) {
  return {{"run", cell.history[ch.at].run_id}, {"index", ch.at}, {"ratio", ch.ratio}, {"threshold", ch.threshold}};
}

// A measured cell: its latest run, the history and the changes found in it.
nlohmann::json cell_json(const BoardRow& row, const BoardCell& cell, const BoardPoint& latest, bool baseline) {
  nlohmann::json history = nlohmann::json::array();
  for (const auto& h : cell.history) {
    history.push_back({{"run", h.run_id},
                       {"start_time", h.start_time},
                       {"git_revision", h.git_revision},
                       {"libtorch_version", h.libtorch_version},
                       {"status", h.status},
                       {"throughput", h.ok() ? nlohmann::json(h.throughput) : nlohmann::json(nullptr)},
                       {"noise", number_or_null(h.noise)}});
  }
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& ch : cell.changes.changes) changes.push_back(change_json(cell, ch));
  return {
      {"run", latest.run_id},
      {"status", latest.status},
      {"throughput", latest.ok() ? nlohmann::json(latest.throughput) : nlohmann::json(nullptr)},
      {"noise", number_or_null(latest.noise)},
      {"libtorch_version", latest.libtorch_version},
      {"speedup", cell.speedup ? nlohmann::json(*cell.speedup) : nlohmann::json(nullptr)},
      {"verdict", cell.verdict == Verdict::none ? nlohmann::json(nullptr) : nlohmann::json(to_string(cell.verdict))},
      {"text", cell_text(row, cell, baseline)},
      {"history", history},
      {"changes", changes},
      {"pending", cell.changes.pending ? change_json(cell, *cell.changes.pending) : nlohmann::json(nullptr)},
      {"changes_text", changes_text(cell)}};
}

// A row's predicted cells, one per predicted card (null where there is no prediction).
nlohmann::json predicted_json(const BoardRow& row) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : row.predicted) {
    out.push_back(p ? nlohmann::json({{"status", "predicted"},
                                      {"throughput", p->throughput},
                                      {"throughput_low", p->low},
                                      {"throughput_high", p->high},
                                      {"fits", p->fits},
                                      {"largest_batch", p->largest_batch},
                                      {"text", predicted_text(p)}})
                    : nlohmann::json(nullptr));
  }
  return out;
}

// The memory section: per workload and column, the largest batch that trained, the predicted ones.
nlohmann::json memory_json(const Board& b) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : b.memory) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& mc : m.cells) {
      nlohmann::json pred = nlohmann::json::array();
      for (const auto& p : mc.predicted) {
        pred.push_back({{"size_bytes", p.size_bytes},
                        {"largest_batch", p.batch},
                        {"low", p.low},
                        {"high", p.high},
                        {"tried", p.tried}});
      }
      nlohmann::json under = nlohmann::json::array();
      for (const auto& k : mc.under_limit) {
        under.push_back(
            {{"limit_bytes", k.limit_bytes}, {"largest_ok", k.largest_ok}, {"smallest_oom", k.smallest_oom}});
      }
      cells.push_back({{"largest_ok", mc.largest_ok},
                       {"smallest_oom", mc.smallest_oom},
                       {"under_limit", under},
                       {"predicted", pred},
                       {"text", memory_text(mc)}});
    }
    out.push_back({{"workload", m.workload}, {"cells", cells}});
  }
  return out;
}

}  // namespace

nlohmann::json board_model(const Board& b) {
  nlohmann::json j;
  j["store"] = b.store;
  j["last"] = b.options.last;
  j["rule"] = {{"lookback", b.rule.lookback}, {"min_before", b.rule.min_before}, {"hold", b.rule.hold},
               {"k", b.rule.k}, {"floor", b.rule.floor}, {"text", rule_text(b)}};
  j["series_checked"] = b.series;
  j["baseline"] = b.baseline >= 0 ? nlohmann::json(b.columns[size_t(b.baseline)].label()) : nlohmann::json(nullptr);
  j["columns"] = nlohmann::json::array();
  for (const auto& c : b.columns) {
    j["columns"].push_back({{"label", c.label()}, {"machine", c.hostname}, {"device", c.device},
                            {"device_name", c.device_name}, {"libtorch_versions", c.libtorch_versions},
                            {"latest_run", c.latest_run}, {"latest_start", c.latest_start}, {"runs", c.runs},
                            {"title", column_title(c)}});
  }
  // Predicted cards: apart from the measured columns, each row's cell in "predicted" (docs/prediction.md).
  j["predicted_columns"] = nlohmann::json::array();
  for (const auto& card : b.predicted)
    j["predicted_columns"].push_back({{"id", card.id}, {"name", card.name}, {"source", card.source}});
  j["rows"] = nlohmann::json::array();
  for (const auto& row : b.rows) {
    nlohmann::json r = {{"case", row.key},          {"workload", row.workload}, {"model", row.model},
                        {"family", row.family},      {"batch_size", row.batch_size}, {"precision", row.precision},
                        {"layout", row.layout},      {"unit", row.unit},         {"cells", nlohmann::json::array()}};
    for (size_t c = 0; c < row.cells.size(); ++c) {
      const BoardCell& cell = row.cells[c];
      const BoardPoint* p = cell.latest();
      if (!p) {
        r["cells"].push_back(nullptr);
        continue;
      }
      r["cells"].push_back(cell_json(row, cell, *p, int(c) == b.baseline));
    }
    r["predicted"] = predicted_json(row);
    j["rows"].push_back(r);
  }
  j["memory"] = memory_json(b);
  return j;
}

std::string board_json(const Board& b) { return board_model(b).dump(2) + "\n"; }

}  // namespace trainbench
