#include "board/history.h"

#include <algorithm>
#include <cmath>

namespace trainbench {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double hi = v[mid];
  if (v.size() % 2) return hi;
  return (*std::max_element(v.begin(), v.begin() + mid) + hi) / 2.0;
}

struct Level {
  double log_median = 0.0;  // the baseline's median, as a log
  double threshold = 0.0;   // relative change a candidate must exceed
};

// The baseline [from, to) against the candidates [to, to + n_after).
Level level_of(const std::vector<HistoryPoint>& s, size_t from, size_t to, size_t n_after, const StepRule& rule) {
  std::vector<double> logs, noise_before, noise_after;
  for (size_t j = from; j < to; ++j) {
    logs.push_back(std::log(s[j].value));
    noise_before.push_back(s[j].noise);
  }
  for (size_t j = to; j < to + n_after; ++j) noise_after.push_back(s[j].noise);
  Level l;
  l.log_median = median_of(logs);
  std::vector<double> deviations;
  for (const double x : logs) deviations.push_back(std::fabs(x - l.log_median));
  const double spread = 1.4826 * median_of(deviations);
  const double nb = median_of(noise_before), na = median_of(noise_after);
  const double noise = std::max(std::sqrt(nb * nb + na * na), spread);
  l.threshold = std::max(rule.k * noise, rule.floor);
  return l;
}

// +1 above, -1 below, 0 within the threshold.
int side(const HistoryPoint& p, const Level& l) {
  const double r = std::exp(std::log(p.value) - l.log_median);
  if (r - 1.0 > l.threshold) return 1;
  if (1.0 - r > l.threshold) return -1;
  return 0;
}

}  // namespace

History detect_changes(const std::vector<HistoryPoint>& s, const StepRule& rule) {
  History h;
  const size_t n = s.size(), before = static_cast<size_t>(rule.min_before), hold = static_cast<size_t>(rule.hold),
               lookback = static_cast<size_t>(rule.lookback);
  size_t start = 0;  // the first run of the current level
  size_t i = start + before;
  while (i + hold <= n) {
    const size_t from = std::max(start, i >= lookback ? i - lookback : 0);
    const Level l = level_of(s, from, i, hold, rule);
    const int first = side(s[i], l);
    bool held = first != 0;
    for (size_t j = i + 1; held && j < i + hold; ++j) held = side(s[j], l) == first;
    if (!held) {
      ++i;
      continue;
    }
    // Where the change starts (docs/methodology.md, "History and regressions"): at i, unless run i lies
    // nearer the old level than the new one, the median of the runs after it that stay beyond the
    // threshold on the same side (at most `lookback`): then it was an outlier just before the step, and
    // the change starts at the next run, while that run and the ones after it still hold. The new
    // level is a median of many runs, so an outlier inside the step does not move it.
    size_t at = i;
    while (at + 1 + hold <= n) {
      bool next_held = true;
      for (size_t j = at + 1; next_held && j < at + 1 + hold; ++j) next_held = side(s[j], l) == first;
      if (!next_held) break;
      std::vector<double> after;
      for (size_t j = at + 1; j < n && after.size() < lookback && side(s[j], l) == first; ++j) {
        after.push_back(std::log(s[j].value));
      }
      const double x = std::log(s[at].value);
      if (std::fabs(x - l.log_median) >= std::fabs(x - median_of(after))) break;
      ++at;
    }
    // Its size: the median of the held runs from there over the baseline's level.
    std::vector<double> held_logs;
    for (size_t j = at; j < at + hold; ++j) held_logs.push_back(std::log(s[j].value));
    h.changes.push_back({at, std::exp(median_of(held_logs) - l.log_median), l.threshold});
    start = at;
    i = start + before;
  }
  // The latest run beyond the threshold, not yet held (the loop needs `hold` runs for a candidate).
  if (n >= start + before + 1) {
    const size_t last = n - 1;
    const size_t from = std::max(start, last >= lookback ? last - lookback : 0);
    const Level l = level_of(s, from, last, 1, rule);
    if (side(s[last], l) != 0) h.pending = Change{last, std::exp(std::log(s[last].value) - l.log_median), l.threshold};
  }
  return h;
}

}  // namespace trainbench
