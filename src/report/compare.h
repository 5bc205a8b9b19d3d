// Comparing runs: join the cases of two results files, take the throughput ratio OTHER/BASE, and call
// each case faster, slower or the same by the measured noise of both runs (docs/methodology.md,
// "Comparing runs"); where both sides measured memory, set their exact bytes side by side. Pure
// functions over ResultsFile: nothing here runs a model.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/record.h"
#include "results/results_file.h"

namespace trainbench {

// none: no ratio (oom or error on a side); predicted: a ratio of two predictions, no measured verdict.
enum class Verdict { faster, slower, same, none, predicted };
const char* to_string(Verdict v);

// Memory bytes are exact allocator counts, not noisy samples: they compare by exact difference.
enum class SizeChange { smaller, larger, same };
const char* to_string(SizeChange c);
SizeChange size_change(int64_t base_bytes, int64_t other_bytes);

// One memory size both sides predicted a largest batch for (a `memory` run's predictions).
struct PredictionPair {
  int64_t size_bytes = 0;
  int64_t base_batch = 0, other_batch = 0;  // 0: not even one sample fits
};

// The `memory` objects of a joined case, when both sides are ok and carry one (docs/memory.md).
struct MemoryComparison {
  int64_t base_peak_bytes = 0, other_peak_bytes = 0;  // memory.peak_bytes: the exact tensor peak
  std::optional<double> peak_ratio;                   // other / base; empty when either peak is 0
  SizeChange peak_change = SizeChange::same;
  // memory.footprint_peak_bytes (what a memory limit sees); empty unless both sides read it (non-zero).
  std::optional<int64_t> base_footprint_bytes, other_footprint_bytes;
  std::optional<double> footprint_ratio;
  SizeChange footprint_change = SizeChange::same;
  std::vector<PredictionPair> predictions;  // sizes both sides predicted for, in BASE's order
};

// Both sides ok with a `memory` object: their comparison; else empty (older files, oom, one side only).
std::optional<MemoryComparison> compare_memory(const Record& base, const Record& other);

// One case present in both files.
struct CaseComparison {
  std::string key;     // the descriptor without the device (see join_key)
  std::string family;  // cnn | ablation | lstm | transformer | other
  Record base, other;
  std::optional<double> ratio;  // other.throughput / base.throughput; empty unless both are ok
  double noise = 0.0;           // the relative difference that still counts as `same`
  Verdict verdict = Verdict::none;
  std::string note;                        // why there is no ratio: "oom in OTHER", "error in BASE: ..."
  std::optional<MemoryComparison> memory;  // both sides measured memory
};

struct FamilyMean {
  std::string family;  // a family name, or "overall"
  double geomean = 0.0;
  int count = 0;  // ratios that went into it
};

struct Comparison {
  std::string base_label, other_label;  // file names as given
  Context base_context, other_context;
  bool keys_with_threads = false;     // the join key kept the thread count (a thread sweep)
  std::vector<CaseComparison> cases;  // in BASE's order
  std::vector<Record> only_in_base, only_in_other;
  std::vector<FamilyMean> means;  // families in a fixed order (those with ratios), then "overall"

  bool has_memory() const;  // some joined case compares memory
};

// Relative noise of one case: the robust relative spread of a step, jitter / median (0 when not ok).
double relative_noise(const Record& r);
// The rule: with noise a and b of the two sides, `same` when |ratio - 1| <= sqrt(a^2 + b^2).
Verdict verdict_for(double ratio, double noise_base, double noise_other);
double combined_noise(double noise_base, double noise_other);

// The key cases are joined by: the descriptor without the device, e.g. "resnet50:b32:fp32:nchw",
// "bert:hidden=768:b8:fp32:nchw:adam". The thread count is left out as well (it belongs to the
// machine like the device) unless `with_threads`.
std::string join_key(const Record& r, bool with_threads);
// A case's whole identity but its device, as the board's rows are keyed: join_key plus what the
// record's descriptor asked for that join_key leaves out, a thread count (`--threads 1,2` gives two
// rows; the count a default run got is the machine's) and the data source (real data and synthetic
// are two rows).
std::string case_key(const Record& r);

// The workload family of a model from the registry; "other" for a model it does not know.
std::string family_of(const std::string& model);
// "CNNs", "ablation", "LSTM", "Transformer", "overall", ...
std::string family_title(const std::string& family);

double geometric_mean(const std::vector<double>& values);  // NaN for none

// Lets runs that differ in a setting line up (e.g. nchw against nhwc): sets `field` (layout,
// precision or optimizer) of every record to "*", so the join key no longer tells them apart.
// Throws std::invalid_argument naming an unknown field.
void ignore_field(ResultsFile& f, const std::string& field);

// When BASE and OTHER share no case: one line saying so, and the setting whose --ignore would line
// them up ("no case in common: they differ in layout (nchw in BASE, nhwc in OTHER); try --ignore layout").
// "" when they share a case or either has none.
std::string disjoint_hint(const ResultsFile& base, const ResultsFile& other);

// Joins BASE and OTHER. Threads stay in the key when either file sweeps threads (a key that would
// otherwise appear twice in one file).
Comparison compare_runs(const ResultsFile& base, const ResultsFile& other, const std::string& base_label,
                        const std::string& other_label);

// Printers: one comparison per OTHER file, in the formats of --format.
std::string print_comparisons_table(const std::vector<Comparison>& cs);
std::string print_comparisons_markdown(const std::vector<Comparison>& cs);
std::string print_comparisons_csv(const std::vector<Comparison>& cs);
std::string print_comparisons_json(const std::vector<Comparison>& cs);

// compare's --format: table, md (or markdown), csv, json. Throws std::invalid_argument naming the value
// and the known names, as every --format does (results/reporter.h).
using ComparisonPrinter = std::string (*)(const std::vector<Comparison>&);
ComparisonPrinter comparison_printer(const std::string& format);

}  // namespace trainbench
