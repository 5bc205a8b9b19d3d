// History per case: where a series of runs' throughputs changed level, beyond the noise and held
// (docs/methodology.md, "History and regressions"). Pure functions over numbers: the board gives each
// case's series on one machine and device, oldest first.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

namespace trainbench {

// One run of a case: its throughput (> 0) and the relative noise its record carries (jitter / median
// of the step time, 0 when unknown).
struct HistoryPoint {
  double value = 0.0;
  double noise = 0.0;
};

// The rule's constants (docs/methodology.md states them and the false-alarm rate they give).
struct StepRule {
  int lookback = 8;     // the baseline: at most this many runs before a candidate, within the current level
  int min_before = 3;   // and at least this many
  int hold = 2;         // a new level must hold for this many runs in a row
  double k = 3.0;       // beyond k x noise ...
  double floor = 0.02;  // ... and beyond 2%
};

// A change of level: `at` is the first run of the new level; ratio = new level / old level (the median
// of the held runs over the baseline's median); threshold = the relative change it had to exceed.
struct Change {
  size_t at = 0;
  double ratio = 1.0;
  double threshold = 0.0;
};

struct History {
  std::vector<Change> changes;    // confirmed, oldest first
  std::optional<Change> pending;  // the latest run alone is beyond the threshold: not yet held
};

// The noise of a baseline and a candidate: the records' noise of both sides combined (as compare does),
// or the baseline's own run-to-run spread (1.4826 x MAD of the log throughputs) where that is larger.
History detect_changes(const std::vector<HistoryPoint>& series, const StepRule& rule = {});

}  // namespace trainbench
