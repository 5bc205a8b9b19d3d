// The board: the study's table built from the results store, across machines and over time
// (docs/board.md). One row per case (model, batch, precision, layout: compare's join key), one column
// per machine and device (the latest measurement of each case in that column's latest runs), the
// speed-up against a baseline column with compare's noise verdict, the largest batch each column
// found or predicted, and each case's history on each column with its changes of level flagged
// (board/history.h).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "board/history.h"
#include "predict/catalogue.h"
#include "report/compare.h"
#include "store/store.h"

namespace trainbench {

struct BoardOptions {
  // Which column the speed-ups are against: a device ("cpu", "cuda", "cuda:0"), a device name, or a
  // column's label HOST/DEVICE; it must name one column. Empty: the first column.
  std::string baseline;
  int64_t last = 20;  // each machine's and device's latest N runs are read (history and cells)
  std::string query;  // which runs at all (store.h RunQuery syntax); empty: every run
};

// One machine and device.
struct BoardColumn {
  std::string hostname, device, device_name;
  std::vector<std::string> libtorch_versions;  // of the runs its cells come from, latest first
  int64_t latest_run = 0;                      // the latest run read
  std::string latest_start;
  int64_t runs = 0;  // runs read (at most --last)
  std::string label() const { return hostname + "/" + device; }
};

// One run of a case on one column.
struct BoardPoint {
  int64_t run_id = 0;
  std::string start_time, git_revision, libtorch_version;
  std::string status;   // ok | oom | error
  double throughput = 0.0;
  double noise = 0.0;   // the record's relative noise: jitter / median of the step time
  bool ok() const { return status == "ok" && throughput > 0.0; }
};

struct BoardCell {
  std::vector<BoardPoint> history;  // oldest first; empty: the column has not measured this case
  std::optional<double> speedup;    // latest throughput / the baseline column's latest (both ok)
  Verdict verdict = Verdict::none;  // compare's rule on the speed-up
  History changes;                  // over `history`'s ok points; Change::at indexes `history`
  const BoardPoint* latest() const { return history.empty() ? nullptr : &history.back(); }
};

// A case predicted for a card (`board --predict ID`, docs/prediction.md): never a measured cell.
struct BoardPredictedCell {
  double throughput = 0.0, low = 0.0, high = 0.0;  // the prediction and its interval
  bool fits = false;                               // the batch fits the card's memory
  int64_t largest_batch = 0;
};

struct BoardRow {
  std::string key;       // compare's join key, e.g. "resnet50:b32:fp32:nchw"
  std::string workload;  // the key without the batch (the memory table's rows)
  std::string model, family, precision, layout, unit;
  int64_t batch_size = 0;
  std::vector<BoardCell> cells;  // one per column
  std::vector<std::optional<BoardPredictedCell>> predicted;  // one per predicted card; empty: none asked
};

// The largest batch one column trained or predicted for a workload.
struct BoardMemoryCell {
  int64_t largest_ok = 0;    // the largest batch that trained without a memory limit (0: none seen)
  int64_t smallest_oom = 0;  // the smallest batch above it that ran out of memory (0: none seen)
  // The same under each --memory-limit the cases ran under (Record::memory_limit_bytes), ascending:
  // what trains under 4 GiB says nothing of what trains under 8 GiB.
  struct Bracket {
    int64_t limit_bytes = 0, largest_ok = 0, smallest_oom = 0;
  };
  std::vector<Bracket> under_limit;
  struct Predicted {
    int64_t size_bytes = 0, batch = 0, low = 0, high = 0;  // a `memory --fits` prediction
    bool tried = false;  // the batch trained under the size itself (MemoryPrediction::trained_under_limit)
  };
  std::vector<Predicted> predicted;  // from the latest memory run with predictions
};
struct BoardMemoryRow {
  std::string workload;
  std::vector<BoardMemoryCell> cells;
};

struct Board {
  std::string store;  // the store's name (no password)
  BoardOptions options;
  StepRule rule;
  std::vector<BoardColumn> columns;
  int baseline = -1;  // index into columns; -1 when there is no column
  std::vector<BoardRow> rows;
  std::vector<BoardMemoryRow> memory;  // workloads with a batch bracketed by an oom, or a prediction
  int64_t series = 0;                  // histories with at least min_before + hold ok runs (checked)
  std::vector<predict::DeviceSpec> predicted;  // cards predicted for (`--predict`), after the measured columns
};

// Adds a predicted column per card: `predict` gives a row's prediction on a card (nullopt: none, e.g. a
// model it cannot census). The measured columns, speed-ups and histories are left as they are.
void add_predicted_columns(
    Board& b, const std::vector<predict::DeviceSpec>& cards,
    const std::function<std::optional<BoardPredictedCell>(const BoardRow&, const predict::DeviceSpec&)>& predict);

// Throws InputError for a --baseline that names no column or several, a bad query or --last < 1.
Board build_board(Store& store, const BoardOptions& options);

// The printers (board_print.cpp): Markdown, CSV (one line per row and column), JSON, and the HTML page
// (Chart.js inlined).
std::string board_markdown(const Board& b);
std::string board_csv(const Board& b);
std::string board_json(const Board& b);
nlohmann::json board_model(const Board& b);  // what board_json prints and the page draws
// The texts every format shares: a cell's changes ("slower -20% at run 7 (...)"; "" when none), a
// largest-batch cell ("98", "~181 at 4G [150, 200]"), the history rule in one sentence.
std::string changes_text(const BoardCell& cell);
std::string memory_text(const BoardMemoryCell& m);
std::string rule_text(const Board& b);
std::string board_html(const Board& b, const std::string& chartjs);

}  // namespace trainbench
