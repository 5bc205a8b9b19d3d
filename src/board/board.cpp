#include "board/board.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/device_text.h"
#include "core/value_rules.h"
#include "report/html_report.h"  // detail::sweep_key

namespace trainbench {

namespace {

int family_rank(const std::string& family) {
  static const std::vector<std::string> order = {"cnn", "ablation", "lstm", "transformer"};
  const auto it = std::find(order.begin(), order.end(), family);
  return static_cast<int>(it - order.begin());
}

// What the board needs of a record beyond the store's columns: its keys, and a memory run's predictions.
struct Keys {
  std::string key, workload, family;
};

Keys keys_of(const Record& r) { return {case_key(r), detail::sweep_key(r), family_of(r.model)}; }

// The memory limit a stored case ran under, read from its record's text as the store wrote it (compact
// JSON) without parsing the whole record: 0 when it ran under none, or the file was written before
// records said so.
int64_t memory_limit_of(const StoredCase& sc) {
  static const std::string key = "\"memory_limit_bytes\":";
  const size_t at = sc.record.find(key);
  if (at == std::string::npos) return 0;
  int64_t v = 0;
  for (size_t i = at + key.size(); i < sc.record.size() && std::isdigit(static_cast<unsigned char>(sc.record[i]));
       ++i) {
    if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) return 0;  // not a size the record's rule allows
    v = v * 10 + (sc.record[i] - '0');
  }
  return v;
}

Record parse_record(const StoredCase& c, const std::string& store) {
  try {
    return record_from_json(nlohmann::json::parse(c.record));
  } catch (const std::exception& e) {
    throw StoreError(store + ": run " + std::to_string(c.run_id) + ", case " + std::to_string(c.position) +
                     ": not readable: " + e.what());
  }
}

// The column --baseline names: its device, device type, device name or label.
int find_baseline(const std::vector<BoardColumn>& cols, const std::string& want) {
  if (cols.empty()) return -1;
  if (want.empty()) return 0;
  std::vector<int> hits;
  for (size_t i = 0; i < cols.size(); ++i) {
    const BoardColumn& c = cols[i];
    const std::string type = c.device.substr(0, c.device.find(':'));
    if (want == c.device || want == type || want == c.device_name || want == c.label()) hits.push_back(int(i));
  }
  std::string all;
  for (const auto& c : cols) all += (all.empty() ? "" : ", ") + c.label();
  if (hits.empty()) throw InputError("--baseline '" + want + "' names no column (there are: " + all + ")");
  if (hits.size() > 1) {
    throw InputError("--baseline '" + want + "' names " + std::to_string(hits.size()) +
                     " columns: give one as HOST/DEVICE (there are: " + all + ")");
  }
  return hits[0];
}

// Reads one column's runs (oldest first) into the board: its cells' histories, new rows as cases
// first appear, and the largest batches.
class ColumnReader {
 public:
  ColumnReader(Store& store, Board& b) : store_(store), b_(b) {}

  // The cases of `runs` on `device` (canonical): a run over two devices gives each column its own.
  void read(const std::vector<const StoredRun*>& runs, const std::string& device) {
    col_ = b_.columns.size() - 1;
    keys_by_name_.clear();
    for (const StoredRun* run : runs) {
      for (const StoredCase& sc : store_.cases(run->id)) {
        if (canonical_device_text(sc.device.empty() ? run->device : sc.device) == device) add(*run, sc);
      }
    }
  }

 private:
  void add(const StoredRun& run, const StoredCase& sc) {
    const bool has_predictions = sc.record.find("\"predictions\":[{") != std::string::npos;
    auto k = keys_by_name_.find(sc.name);
    std::optional<Record> rec;
    if (k == keys_by_name_.end() || has_predictions) rec = parse_record(sc, b_.store);
    if (k == keys_by_name_.end()) k = keys_by_name_.emplace(sc.name, keys_of(*rec)).first;
    const Keys& keys = k->second;
    BoardRow& row = row_for(keys, sc);
    if (sc.status == "ok" && !sc.unit.empty()) row.unit = sc.unit;
    BoardPoint p;
    p.run_id = run.id;
    p.start_time = run.start_time;
    p.git_revision = run.git_revision;
    p.libtorch_version = run.libtorch_version;
    p.status = sc.status;
    p.throughput = std::isfinite(sc.throughput) ? sc.throughput : 0.0;
    p.noise = sc.median_s > 0.0 && std::isfinite(sc.jitter_s) ? sc.jitter_s / sc.median_s : 0.0;
    auto& history = row.cells[col_].history;
    // A case twice in one run (a repeated descriptor): the later one stands for the run.
    if (!history.empty() && history.back().run_id == run.id) history.pop_back();
    history.push_back(p);
    if (sc.status == "ok" || sc.status == "oom" || has_predictions) add_memory(keys, sc, rec);
  }

  BoardRow& row_for(const Keys& keys, const StoredCase& sc) {
    auto [it, fresh] = row_of_.emplace(keys.key, b_.rows.size());
    if (fresh) {
      BoardRow row;
      row.key = keys.key;
      row.workload = keys.workload;
      row.model = sc.model;
      row.family = keys.family;
      row.precision = sc.precision;
      row.layout = sc.layout;
      row.batch_size = sc.batch_size;
      row.cells.resize(b_.columns.size());
      b_.rows.push_back(std::move(row));
    }
    return b_.rows[it->second];
  }

  // The largest batch: brackets from ok and oom cases, predictions from memory runs (the latest wins).
  void add_memory(const Keys& keys, const StoredCase& sc, const std::optional<Record>& rec) {
    auto [m, fresh] = memory_row_of_.emplace(keys.workload, b_.memory.size());
    if (fresh) b_.memory.push_back({keys.workload, std::vector<BoardMemoryCell>(b_.columns.size())});
    BoardMemoryCell& mc = b_.memory[m->second].cells[col_];
    int64_t* largest_ok = &mc.largest_ok;
    int64_t* smallest_oom = &mc.smallest_oom;
    if (const int64_t limit = memory_limit_of(sc); limit > 0) {
      auto at = std::find_if(mc.under_limit.begin(), mc.under_limit.end(),
                             [&](const BoardMemoryCell::Bracket& k) { return k.limit_bytes >= limit; });
      if (at == mc.under_limit.end() || at->limit_bytes != limit) at = mc.under_limit.insert(at, {limit, 0, 0});
      largest_ok = &at->largest_ok;
      smallest_oom = &at->smallest_oom;
    }
    if (sc.status == "ok") *largest_ok = std::max(*largest_ok, sc.batch_size);
    if (sc.status == "oom" && (*smallest_oom == 0 || sc.batch_size < *smallest_oom)) *smallest_oom = sc.batch_size;
    if (rec && rec->memory && !rec->memory->predictions.empty()) {
      mc.predicted.clear();
      for (const auto& pr : rec->memory->predictions) {
        mc.predicted.push_back(
            {pr.size_bytes, pr.largest_batch, pr.largest_batch_low, pr.largest_batch_high, pr.trained_under_limit > 0});
      }
    }
  }

  Store& store_;
  Board& b_;
  size_t col_ = 0;
  std::map<std::string, Keys> keys_by_name_;  // this column's descriptors' keys, from their first record read
  std::map<std::string, size_t> row_of_;      // join key -> row
  std::map<std::string, size_t> memory_row_of_;
};

// An oom below the largest batch that trained brackets nothing (another run, another limit); workloads
// with neither a bracket nor a prediction are left out.
void tidy_memory(Board& b) {
  for (auto& m : b.memory) {
    for (auto& mc : m.cells) {
      if (mc.smallest_oom != 0 && mc.smallest_oom <= mc.largest_ok) mc.smallest_oom = 0;
      for (auto& k : mc.under_limit) {
        if (k.smallest_oom != 0 && k.smallest_oom <= k.largest_ok) k.smallest_oom = 0;
      }
    }
  }
  b.memory.erase(std::remove_if(b.memory.begin(), b.memory.end(),
                                [](const BoardMemoryRow& m) {
                                  return std::none_of(m.cells.begin(), m.cells.end(), [](const BoardMemoryCell& c) {
                                    return c.smallest_oom != 0 || !c.predicted.empty() ||
                                           std::any_of(c.under_limit.begin(), c.under_limit.end(),
                                                       [](const auto& k) { return k.smallest_oom != 0; });
                                  });
                                }),
                 b.memory.end());
  std::sort(b.memory.begin(), b.memory.end(),
            [](const BoardMemoryRow& x, const BoardMemoryRow& y) { return x.workload < y.workload; });
}

// Each column's LibTorch versions: those of the runs its latest cells come from, latest first.
void column_versions(Board& b) {
  for (size_t col = 0; col < b.columns.size(); ++col) {
    std::vector<std::pair<std::string, std::string>> versions;  // (start, version)
    for (const auto& row : b.rows) {
      if (const BoardPoint* p = row.cells[col].latest()) versions.emplace_back(p->start_time, p->libtorch_version);
    }
    std::sort(versions.rbegin(), versions.rend());
    auto& list = b.columns[col].libtorch_versions;
    for (const auto& [when, v] : versions) {
      if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
    }
  }
}

// A cell's speed-up against the baseline's latest, and its history's changes (indexes into `history`).
void judge_cell(const Board& b, const BoardPoint* base, bool is_base, BoardCell& cell, int64_t& series) {
  const BoardPoint* p = cell.latest();
  if (p && base && p->ok() && base->ok()) {
    cell.speedup = p->throughput / base->throughput;
    cell.verdict = is_base ? Verdict::none : verdict_for(*cell.speedup, base->noise, p->noise);
  }
  std::vector<HistoryPoint> points;
  std::vector<size_t> where;
  for (size_t i = 0; i < cell.history.size(); ++i) {
    if (!cell.history[i].ok()) continue;
    points.push_back({cell.history[i].throughput, cell.history[i].noise});
    where.push_back(i);
  }
  if (points.size() >= static_cast<size_t>(b.rule.min_before + b.rule.hold)) ++series;
  cell.changes = detect_changes(points, b.rule);
  for (auto& ch : cell.changes.changes) ch.at = where[ch.at];
  if (cell.changes.pending) cell.changes.pending->at = where[cell.changes.pending->at];
}

}  // namespace

Board build_board(Store& store, const BoardOptions& options) {
  if (options.last < 1) throw InputError("--last must be at least 1 (got " + std::to_string(options.last) + ")");
  Board b;
  b.store = store.name();
  b.options = options;
  // The runs, oldest first, grouped by machine and device; each group's latest N.
  const std::vector<StoredRun> all = store.runs(parse_run_query(options.query));
  // A run over several devices (context.device "cpu,cuda:0") belongs to each device's column; "cuda"
  // and "cuda:0" are one device.
  std::map<std::pair<std::string, std::string>, std::vector<const StoredRun*>> groups;
  for (const auto& r : all) {
    for (const std::string& d : context_devices(r.device)) groups[{r.hostname, d}].push_back(&r);
  }
  ColumnReader reader(store, b);
  for (auto& [where, runs] : groups) {
    if (static_cast<int64_t>(runs.size()) > options.last) runs.erase(runs.begin(), runs.end() - options.last);
    BoardColumn c;
    c.hostname = where.first;
    c.device = where.second;
    // The device's name from the latest run on it alone; a run over several devices names the CPU
    // (its context describes the CPU), so a GPU column from such runs only is named by its device.
    c.device_name = where.second;
    for (auto r = runs.rbegin(); r != runs.rend(); ++r) {
      const std::vector<std::string> devices = context_devices((*r)->device);
      if ((devices.size() == 1 && devices[0] == where.second) || is_cpu_device_text(where.second)) {
        c.device_name = (*r)->device_name;
        break;
      }
    }
    c.latest_run = runs.back()->id;
    c.latest_start = runs.back()->start_time;
    c.runs = static_cast<int64_t>(runs.size());
    b.columns.push_back(c);
    for (auto& row : b.rows) row.cells.emplace_back();
    for (auto& m : b.memory) m.cells.emplace_back();
    reader.read(runs, where.second);
  }
  tidy_memory(b);
  b.baseline = find_baseline(b.columns, options.baseline);
  column_versions(b);
  for (auto& row : b.rows) {
    const BoardPoint* base = b.baseline >= 0 ? row.cells[size_t(b.baseline)].latest() : nullptr;
    for (size_t c = 0; c < row.cells.size(); ++c) judge_cell(b, base, int(c) == b.baseline, row.cells[c], b.series);
  }
  std::sort(b.rows.begin(), b.rows.end(), [](const BoardRow& x, const BoardRow& y) {
    return std::make_tuple(family_rank(x.family), x.workload, x.batch_size) <
           std::make_tuple(family_rank(y.family), y.workload, y.batch_size);
  });
  return b;
}

void add_predicted_columns(
    Board& b, const std::vector<predict::DeviceSpec>& cards,
    const std::function<std::optional<BoardPredictedCell>(const BoardRow&, const predict::DeviceSpec&)>& predict) {
  b.predicted = cards;
  for (auto& row : b.rows) {
    row.predicted.clear();
    for (const auto& card : cards) row.predicted.push_back(predict(row, card));
  }
}

}  // namespace trainbench
