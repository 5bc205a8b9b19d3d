// `trainbench explain`: one training step of a model broken into its layers. Each distinct layer
// shape (with its count per step) is timed alone with the op timer; the layers' sum is set against
// the measured whole step, and layers far below their family's efficiency or the device's peak
// are flagged, with the other layout and precision tried for them. Never prints.
#pragma once
#include <functional>
#include <optional>

#include "ops/layers.h"
#include "ops/op_timer.h"
#include "results/op_record.h"
#include "results/record.h"
#include "cases/case.h"

namespace trainbench {

// When is a layer flagged? Only layers with counted FLOPs that take at least `min_share` of the step.
struct FlagRule {
  double min_share = 0.02;          // of the measured step time
  double below_family = 1.0 / 3.0;  // achieved GFLOP/s under this fraction of the family's average
  double below_peak = 0.10;         // or under this fraction of the peak (when one is known)
};

// A layer's attribution from its op timing: count x per-call time, FLOPs, GFLOP/s, % of `peak_gflops`
// (NaN: none known). Its share is left to attribute().
ExplainLayer explain_layer(const LayerCall& call, const OpRecord& timing, double peak_gflops);

// Fills shares, the step/layers/other totals, flags and findings, and sorts the layers by time
// (largest first). Pure: no timing, so it can be checked on synthetic numbers. A family's average is
// its layers' FLOPs over their time, so a few slow small layers do not drag it down.
void attribute(Explanation& e, const FlagRule& rule = {});

// Adds, for the flagged layers, a finding per alternative setting that was measured (e.g. "--layout
// nhwc: the flagged layers 1.8x faster (52 ms -> 29 ms per step)"). Call after the alternatives are in.
void summarize_alternatives(Explanation& e);

struct ExplainSettings {
  Case c;                      // the model case (canonical, validated)
  MeasureSettings op_measure;  // per phase of each layer
  double peak_gflops;          // peak for the case's precision (PeakInfo::peak_for); NaN: none
  bool try_alternatives = true;
};

// Explains `c` given its measured whole step (`step`, status ok). `progress` is called before each layer
// is timed (index, total, descriptor), so a CLI can show where it is; it must not throw.
Explanation explain_case(const ExplainSettings& s, const Record& step,
                         const std::function<void(size_t, size_t, const std::string&)>& progress = {});

}  // namespace trainbench
