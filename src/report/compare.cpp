#include "report/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "cases/case.h"
#include "cases/workload_info.h"

namespace trainbench {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::faster:
      return "faster";
    case Verdict::slower:
      return "slower";
    case Verdict::same:
      return "same";
    case Verdict::none:
      return "-";
    case Verdict::predicted:
      return "predicted";
  }
  return "-";
}

const char* to_string(SizeChange c) {
  switch (c) {
    case SizeChange::smaller:
      return "smaller";
    case SizeChange::larger:
      return "larger";
    case SizeChange::same:
      return "same";
  }
  return "same";
}

SizeChange size_change(int64_t base_bytes, int64_t other_bytes) {
  if (other_bytes < base_bytes) return SizeChange::smaller;
  return other_bytes > base_bytes ? SizeChange::larger : SizeChange::same;
}

std::optional<MemoryComparison> compare_memory(const Record& base, const Record& other) {
  // A failed case's memory (if any) is of a step that did not finish: not comparable.
  if (!base.ok() || !other.ok() || !base.memory || !other.memory) return std::nullopt;
  const MemoryInfo& b = *base.memory;
  const MemoryInfo& o = *other.memory;
  MemoryComparison m;
  m.base_peak_bytes = b.peak_bytes;
  m.other_peak_bytes = o.peak_bytes;
  if (b.peak_bytes > 0 && o.peak_bytes > 0)
    m.peak_ratio = static_cast<double>(o.peak_bytes) / static_cast<double>(b.peak_bytes);
  m.peak_change = size_change(b.peak_bytes, o.peak_bytes);
  // 0 means "not read" (docs/json-schema.md), so a footprint compares only when both sides read one.
  if (b.footprint_peak_bytes > 0 && o.footprint_peak_bytes > 0) {
    m.base_footprint_bytes = b.footprint_peak_bytes;
    m.other_footprint_bytes = o.footprint_peak_bytes;
    m.footprint_ratio = static_cast<double>(o.footprint_peak_bytes) / static_cast<double>(b.footprint_peak_bytes);
    m.footprint_change = size_change(b.footprint_peak_bytes, o.footprint_peak_bytes);
  }
  for (const auto& bp : b.predictions) {
    for (const auto& op : o.predictions) {
      if (op.size_bytes != bp.size_bytes) continue;
      m.predictions.push_back({bp.size_bytes, bp.largest_batch, op.largest_batch});
      break;
    }
  }
  return m;
}

bool Comparison::has_memory() const {
  return std::any_of(cases.begin(), cases.end(), [](const CaseComparison& cc) { return cc.memory.has_value(); });
}

double relative_noise(const Record& r) {
  if (!r.ok() || !(r.step_time_s.median > 0.0)) return 0.0;
  const double noise = r.step_time_s.jitter / r.step_time_s.median;
  return std::isfinite(noise) ? noise : 0.0;
}

double combined_noise(double noise_base, double noise_other) {
  return std::sqrt(noise_base * noise_base + noise_other * noise_other);
}

Verdict verdict_for(double ratio, double noise_base, double noise_other) {
  if (!std::isfinite(ratio)) return Verdict::none;
  if (std::fabs(ratio - 1.0) <= combined_noise(noise_base, noise_other)) return Verdict::same;
  return ratio > 1.0 ? Verdict::faster : Verdict::slower;
}

// join_key, or with `asked` (the case the record's descriptor names) its thread count and data source too.
std::string join_key_of(const Record& r, bool detailed, const Case* asked);

// A prediction's key names its card: it never pairs with a measured record, and one file's predictions
// for several cards stay apart.
std::string join_key(const Record& r, bool detailed) {
  const std::string key = join_key_of(r, detailed, nullptr);
  return r.prediction ? key + " (predicted for " + r.prediction->device_id + ")" : key;
}

std::string case_key(const Record& r) {
  // What the record's own descriptor asked for beyond compare's key: a thread count given (":tN"; the
  // count a default run got belongs to the machine) and the data source. A name that is no descriptor
  // (a file written by hand) keeps compare's key.
  try {
    const Case asked = parse_case(r.name);
    return join_key_of(r, false, &asked);
  } catch (const std::exception&) {
    return join_key(r, false);
  }
}

std::string join_key_of(const Record& r, bool detailed, const Case* asked) {
  // The record's case descriptor without its device (and data source): the same case measured on
  // another machine or device pairs with it. `detailed` (when a file repeats the shorter key) keeps the
  // threads and the kernel choices.
  Case c;
  c.model = r.model;
  c.params = r.params;
  // Parameters at their default are left out, so that a file written before a parameter existed (a bert
  // record without `attention`) pairs with one that records its default.
  // A kernel choice (attention=sdpa or math) is left out too unless the key must tell cases of one file
  // apart: the same bert trained on LibTorch 1.13 (math) and 2.x (sdpa) pairs.
  if (const WorkloadInfo* w = find_workload(r.model)) {
    for (const auto& p : w->params) {
      const auto it = c.params.find(p.key);
      if (it != c.params.end() && (it->second == p.default_value || (p.kernel_choice && !detailed))) {
        c.params.erase(it);
      }
    }
  }
  c.batch = r.batch_size;
  c.optimizer = r.optimizer;
  c.threads = detailed ? r.threads : 0;
  c.forward_only = r.forward_only;
  if (asked != nullptr) {
    c.threads = asked->threads;
    c.data = asked->data;
    c.data_dtype = asked->data_dtype;
    c.loader_threads = asked->loader_threads;
    c.data_transfer = asked->data_transfer;
  }
  std::string descriptor = c.descriptor();
  descriptor.resize(descriptor.size() - 1 - c.device.str().size());  // ":DEVICE" comes last
  // The record's precision and layout as its text: a file's own, or "*" where compare ignores them
  // (a case holds only values it knows). The last such field: a model path before it may hold anything.
  const std::string field = ":b" + std::to_string(c.batch) + ":";
  const size_t at = descriptor.rfind(field + c.precision.str() + ":" + to_string(c.layout));
  return descriptor.replace(at + field.size(), c.precision.str().size() + 1 + std::string(to_string(c.layout)).size(),
                            r.precision + ":" + r.layout);
}

std::string family_of(const std::string& model) {
  const WorkloadInfo* w = find_workload(model);
  return w ? w->family : "other";
}

std::string family_title(const std::string& family) {
  for (const auto& f : workload_families())
    if (f.name == family) return f.title;
  return family;  // other, overall
}

double geometric_mean(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0.0;
  for (double v : values) sum += std::log(v);
  return std::exp(sum / static_cast<double>(values.size()));
}

namespace {

bool has_duplicate_keys(const ResultsFile& f) {
  std::set<std::string> seen;
  for (const auto& r : f.benchmarks)
    if (!seen.insert(join_key(r, false)).second) return true;
  return false;
}

std::string side_note(const Record& r, const std::string& side) {
  if (r.ok()) return "";
  std::string s = std::string(to_string(r.status)) + " in " + side;
  if (r.status == Status::error && !r.error.empty()) s += ": " + r.error;
  return s;
}

}  // namespace

void ignore_field(ResultsFile& f, const std::string& field) {
  std::string Record::*member = nullptr;
  if (field == "layout")
    member = &Record::layout;
  else if (field == "precision")
    member = &Record::precision;
  else if (field == "optimizer")
    member = &Record::optimizer;
  else
    throw std::invalid_argument("cannot ignore '" + field + "' (expected layout, precision or optimizer)");
  for (auto& r : f.benchmarks) r.*member = "*";
}

std::string disjoint_hint(const ResultsFile& base, const ResultsFile& other) {
  if (base.benchmarks.empty() || other.benchmarks.empty()) return "";
  if (!compare_runs(base, other, "", "").cases.empty()) return "";
  auto values = [](const ResultsFile& f, std::string Record::*member) {
    std::set<std::string> v;
    for (const auto& r : f.benchmarks) v.insert(r.*member);
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
    return s;
  };
  const std::vector<std::pair<std::string, std::string Record::*>> fields = {
      {"layout", &Record::layout}, {"precision", &Record::precision}, {"optimizer", &Record::optimizer}};
  for (const auto& [name, member] : fields) {
    ResultsFile b = base, o = other;
    ignore_field(b, name);
    ignore_field(o, name);
    if (compare_runs(b, o, "", "").cases.empty()) continue;
    return "no case in common: they differ in " + name + " (" + values(base, member) + " in BASE, " +
           values(other, member) + " in OTHER); try --ignore " + name;
  }
  return "no case in common (not even with --ignore layout,precision,optimizer): nothing to compare";
}

Comparison compare_runs(const ResultsFile& base, const ResultsFile& other, const std::string& base_label,
                        const std::string& other_label) {
  const bool with_threads = has_duplicate_keys(base) || has_duplicate_keys(other);
  Comparison c;
  c.base_label = base_label;
  c.other_label = other_label;
  c.keys_with_threads = with_threads;
  c.base_context = base.context;
  c.other_context = other.context;

  // The first record of a key wins if a file still repeats one (e.g. the same case run twice).
  std::map<std::string, const Record*> others;
  std::vector<std::string> other_order;
  for (const auto& r : other.benchmarks) {
    const std::string k = join_key(r, with_threads);
    if (others.emplace(k, &r).second) other_order.push_back(k);
  }
  std::set<std::string> matched;
  std::map<std::string, std::vector<double>> ratios_by_family;
  std::vector<double> all_ratios;
  for (const auto& r : base.benchmarks) {
    const std::string k = join_key(r, with_threads);
    if (matched.count(k)) continue;
    auto it = others.find(k);
    if (it == others.end()) {
      c.only_in_base.push_back(r);
      continue;
    }
    matched.insert(k);
    CaseComparison cc;
    cc.key = k;
    cc.family = family_of(r.model);
    cc.base = r;
    cc.other = *it->second;
    cc.noise = combined_noise(relative_noise(cc.base), relative_noise(cc.other));
    cc.memory = compare_memory(cc.base, cc.other);
    if (cc.base.predicted() && cc.other.predicted()) {
      // Two predictions of one card: their ratio, marked, outside every mean of measurements.
      cc.ratio = cc.other.throughput / cc.base.throughput;
      cc.verdict = Verdict::predicted;
      cc.note = "predicted on both sides";
    } else if (cc.base.ok() && cc.other.ok() && cc.base.throughput > 0.0 && cc.other.throughput > 0.0) {
      const double ratio = cc.other.throughput / cc.base.throughput;
      cc.ratio = ratio;
      cc.verdict = verdict_for(ratio, relative_noise(cc.base), relative_noise(cc.other));
      ratios_by_family[cc.family].push_back(ratio);
      all_ratios.push_back(ratio);
    } else {
      std::string note = side_note(cc.base, "BASE");
      const std::string other_note = side_note(cc.other, "OTHER");
      if (!other_note.empty()) note += (note.empty() ? "" : "; ") + other_note;
      cc.note = note.empty() ? "no throughput" : note;
    }
    c.cases.push_back(std::move(cc));
  }
  for (const auto& k : other_order)
    if (!matched.count(k)) c.only_in_other.push_back(*others[k]);

  std::vector<std::string> families;
  for (const auto& f : workload_families()) families.push_back(f.name);
  for (const auto& [f, v] : ratios_by_family)
    if (std::find(families.begin(), families.end(), f) == families.end()) families.push_back(f);
  for (const auto& f : families) {
    auto it = ratios_by_family.find(f);
    if (it == ratios_by_family.end()) continue;
    c.means.push_back({f, geometric_mean(it->second), static_cast<int>(it->second.size())});
  }
  if (!all_ratios.empty())
    c.means.push_back({"overall", geometric_mean(all_ratios), static_cast<int>(all_ratios.size())});
  return c;
}

}  // namespace trainbench
