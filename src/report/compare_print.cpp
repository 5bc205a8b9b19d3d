// The compare printers: console table, markdown, csv, json. Each prints one block per OTHER file.
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/compare.h"
#include "results/number_format.h"
#include "results/printer.h"
#include "results/reporter.h"
#include "results/text_table.h"

namespace trainbench {

namespace {

struct Cells {
  std::vector<TextColumn> columns;
  std::vector<std::vector<std::string>> rows;
};

// A throughput to show: a measured one, or a prediction's, marked.
bool has_throughput(const Record& r) { return r.ok() || r.predicted(); }
std::string throughput_cell(const Record& r) {
  if (r.predicted()) return format_significant(r.throughput) + " (predicted)";
  return r.ok() ? format_significant(r.throughput) : "-";
}

std::string percent(double x) { return "±" + format_significant(100.0 * x, 2) + "%"; }

Cells case_cells(const Comparison& c) {
  Cells t;
  t.columns = {{"case"},           {"family"},  {"base", 0, true}, {"other", 0, true}, {"unit"}, {"ratio", 0, true},
               {"noise", 0, true}, {"verdict"}, {"note"}};
  for (const auto& cc : c.cases) {
    t.rows.push_back({cc.key, family_title(cc.family), throughput_cell(cc.base), throughput_cell(cc.other),
                      cc.base.unit, cc.ratio ? format_significant(*cc.ratio) : "-", cc.ratio ? percent(cc.noise) : "-",
                      to_string(cc.verdict), cc.note});
  }
  return t;
}

Cells mean_cells(const Comparison& c) {
  Cells t;
  t.columns = {{"family"}, {"geomean ratio", 0, true}, {"cases", 0, true}};
  for (const auto& m : c.means)
    t.rows.push_back({family_title(m.family), format_significant(m.geomean), std::to_string(m.count)});
  return t;
}

// A ratio of exact byte counts with its word: "0.500 smaller" (the word alone when a side is 0).
std::string size_ratio_cell(const std::optional<double>& ratio, SizeChange change) {
  return (ratio ? format_significant(*ratio) + " " : "") + to_string(change);
}

// One row per case whose two sides both measured memory: the tensor peak, and the footprint when
// both sides read one.
Cells memory_cells(const Comparison& c) {
  Cells t;
  t.columns = {{"case"},
               {"base peak", 0, true},
               {"other peak", 0, true},
               {"peak ratio", 0, true},
               {"base footprint", 0, true},
               {"other footprint", 0, true},
               {"footprint ratio", 0, true}};
  for (const auto& cc : c.cases) {
    if (!cc.memory) continue;
    const MemoryComparison& m = *cc.memory;
    const bool footprint = m.footprint_ratio.has_value();
    t.rows.push_back({cc.key, format_bytes(m.base_peak_bytes), format_bytes(m.other_peak_bytes),
                      size_ratio_cell(m.peak_ratio, m.peak_change),
                      footprint ? format_bytes(*m.base_footprint_bytes) : "-",
                      footprint ? format_bytes(*m.other_footprint_bytes) : "-",
                      footprint ? size_ratio_cell(m.footprint_ratio, m.footprint_change) : "-"});
  }
  return t;
}

// One row per case and memory size that both sides predicted a largest batch for.
Cells prediction_cells(const Comparison& c) {
  Cells t;
  t.columns = {{"case"}, {"memory", 0, true}, {"base", 0, true}, {"other", 0, true}};
  for (const auto& cc : c.cases) {
    if (!cc.memory) continue;
    for (const auto& p : cc.memory->predictions)
      t.rows.push_back(
          {cc.key, format_size(p.size_bytes), std::to_string(p.base_batch), std::to_string(p.other_batch)});
  }
  return t;
}

std::string keys_of(const std::vector<Record>& records, bool with_threads, const std::string& quote) {
  std::string s;
  for (const auto& r : records) s += (s.empty() ? "" : ", ") + quote + join_key(r, with_threads) + quote;
  return s;
}

std::string console_table(const Cells& t) { return fitted_table(t.columns, t.rows); }

std::string md_table(const Cells& t) {
  std::string out = markdown_header(t.columns);
  for (const auto& row : t.rows) out += markdown_line(row);
  return out;
}

nlohmann::json side_json(const Record& r) {
  nlohmann::json j = {{"name", r.name}, {"device", r.device}, {"status", to_string(r.status)}};
  j["throughput"] = has_throughput(r) ? nlohmann::json(r.throughput) : nlohmann::json(nullptr);
  j["noise"] = r.ok() ? nlohmann::json(relative_noise(r)) : nlohmann::json(nullptr);
  j["n"] = r.step_time_s.n;
  return j;
}

nlohmann::json bytes_pair_json(int64_t base, int64_t other, const std::optional<double>& ratio, SizeChange change) {
  return {{"base", base},
          {"other", other},
          {"ratio", ratio ? nlohmann::json(*ratio) : nlohmann::json(nullptr)},
          {"change", to_string(change)}};
}

nlohmann::json memory_json(const std::optional<MemoryComparison>& m) {
  if (!m) return nullptr;
  nlohmann::json j;
  j["peak_bytes"] = bytes_pair_json(m->base_peak_bytes, m->other_peak_bytes, m->peak_ratio, m->peak_change);
  j["footprint_peak_bytes"] = m->footprint_ratio ? bytes_pair_json(*m->base_footprint_bytes, *m->other_footprint_bytes,
                                                                   m->footprint_ratio, m->footprint_change)
                                                 : nlohmann::json(nullptr);
  j["predictions"] = nlohmann::json::array();
  for (const auto& p : m->predictions)
    j["predictions"].push_back(
        {{"size_bytes", p.size_bytes}, {"base_largest_batch", p.base_batch}, {"other_largest_batch", p.other_batch}});
  return j;
}

// The CSV's memory cells of a joined case (empty when the case compares no memory); the predictions in
// one cell, "SIZE_BYTES:BASE:OTHER" per size joined by ';'.
std::vector<std::string> memory_csv_cells(const std::optional<MemoryComparison>& m) {
  if (!m) return std::vector<std::string>(9);
  const bool footprint = m->footprint_ratio.has_value();
  std::string predictions;
  for (const auto& p : m->predictions)
    predictions += fmt::format("{}{}:{}:{}", predictions.empty() ? "" : ";", p.size_bytes, p.base_batch, p.other_batch);
  return {std::to_string(m->base_peak_bytes),
          std::to_string(m->other_peak_bytes),
          m->peak_ratio ? format_round_trip(*m->peak_ratio) : "",
          to_string(m->peak_change),
          footprint ? std::to_string(*m->base_footprint_bytes) : "",
          footprint ? std::to_string(*m->other_footprint_bytes) : "",
          footprint ? format_round_trip(*m->footprint_ratio) : "",
          footprint ? to_string(m->footprint_change) : "",
          predictions};
}

}  // namespace

std::string print_comparisons_table(const std::vector<Comparison>& cs) {
  std::string out;
  for (const auto& c : cs) {
    if (!out.empty()) out += "\n";
    out += "BASE  " + c.base_label + ": " + detail::context_summary(c.base_context) + "\n";
    out += "OTHER " + c.other_label + ": " + detail::context_summary(c.other_context) + "\n\n";
    out += console_table(case_cells(c));
    const bool threads = c.keys_with_threads;
    if (!c.only_in_base.empty())
      out += fmt::format("\nonly in BASE ({}): {}\n", c.only_in_base.size(), keys_of(c.only_in_base, threads, ""));
    if (!c.only_in_other.empty())
      out += fmt::format("\nonly in OTHER ({}): {}\n", c.only_in_other.size(), keys_of(c.only_in_other, threads, ""));
    if (!c.means.empty()) out += "\ngeometric mean of OTHER/BASE:\n" + console_table(mean_cells(c));
    if (c.has_memory()) {
      out += "\nmemory (exact bytes, so no noise; footprint: what a memory limit sees):\n" +
             console_table(memory_cells(c));
      const Cells predictions = prediction_cells(c);
      if (!predictions.rows.empty())
        out += "\npredicted largest batch (sizes both sides predicted for):\n" + console_table(predictions);
    }
  }
  return out;
}

std::string print_comparisons_markdown(const std::vector<Comparison>& cs) {
  std::string out;
  for (const auto& c : cs) {
    if (!out.empty()) out += "\n";
    out += "**BASE** `" + c.base_label + "`: " + markdown_escape(detail::context_summary(c.base_context)) + "  \n";
    out += "**OTHER** `" + c.other_label + "`: " + markdown_escape(detail::context_summary(c.other_context)) + "\n\n";
    out += md_table(case_cells(c));
    const bool threads = c.keys_with_threads;
    if (!c.only_in_base.empty())
      out += fmt::format("\nOnly in BASE ({}): {}\n", c.only_in_base.size(), keys_of(c.only_in_base, threads, "`"));
    if (!c.only_in_other.empty())
      out += fmt::format("\nOnly in OTHER ({}): {}\n", c.only_in_other.size(), keys_of(c.only_in_other, threads, "`"));
    if (!c.means.empty()) out += "\nGeometric mean of OTHER/BASE:\n\n" + md_table(mean_cells(c));
    if (c.has_memory()) {
      out +=
          "\nMemory (exact bytes, so no noise; footprint: what a memory limit sees):\n\n" + md_table(memory_cells(c));
      const Cells predictions = prediction_cells(c);
      if (!predictions.rows.empty())
        out += "\nPredicted largest batch (sizes both sides predicted for):\n\n" + md_table(predictions);
    }
  }
  return out;
}

std::string print_comparisons_csv(const std::vector<Comparison>& cs) {
  std::string out =
      "base_file,other_file,case,family,base_name,other_name,base_status,other_status,base_throughput,"
      "other_throughput,unit,ratio,noise,verdict,note,base_peak_bytes,other_peak_bytes,peak_ratio,peak_change,"
      "base_footprint_peak_bytes,other_footprint_peak_bytes,footprint_ratio,footprint_change,predicted_largest_batch\n";
  auto row = [&out](std::vector<std::string> cells, const std::optional<MemoryComparison>& memory = std::nullopt) {
    const std::vector<std::string> more = memory_csv_cells(memory);
    cells.insert(cells.end(), more.begin(), more.end());
    for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + csv_quote(cells[i]);
    out += "\n";
  };
  for (const auto& c : cs) {
    for (const auto& cc : c.cases)
      row({c.base_label, c.other_label, cc.key, cc.family, cc.base.name, cc.other.name, to_string(cc.base.status),
           to_string(cc.other.status), has_throughput(cc.base) ? format_round_trip(cc.base.throughput) : "",
           has_throughput(cc.other) ? format_round_trip(cc.other.throughput) : "", cc.base.unit,
           cc.ratio ? format_round_trip(*cc.ratio) : "", cc.ratio ? format_round_trip(cc.noise) : "",
           cc.ratio ? to_string(cc.verdict) : "", cc.note},
          cc.memory);
    const bool threads = c.keys_with_threads;
    for (const auto& r : c.only_in_base)
      row({c.base_label, c.other_label, join_key(r, threads), family_of(r.model), r.name, "", to_string(r.status), "",
           has_throughput(r) ? format_round_trip(r.throughput) : "", "", r.unit, "", "", "", "only in BASE"});
    for (const auto& r : c.only_in_other)
      row({c.base_label, c.other_label, join_key(r, threads), family_of(r.model), "", r.name, "", to_string(r.status),
           "", has_throughput(r) ? format_round_trip(r.throughput) : "", r.unit, "", "", "", "only in OTHER"});
  }
  return out;
}

std::string print_comparisons_json(const std::vector<Comparison>& cs) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& c : cs) {
    nlohmann::json j = {{"base", c.base_label}, {"other", c.other_label}};
    j["cases"] = nlohmann::json::array();
    for (const auto& cc : c.cases) {
      nlohmann::json k = {{"case", cc.key}, {"family", cc.family}, {"unit", cc.base.unit}, {"note", cc.note}};
      k["base"] = side_json(cc.base);
      k["other"] = side_json(cc.other);
      k["ratio"] = cc.ratio ? nlohmann::json(*cc.ratio) : nlohmann::json(nullptr);
      k["noise"] = cc.ratio ? nlohmann::json(cc.noise) : nlohmann::json(nullptr);
      k["verdict"] = cc.ratio ? nlohmann::json(to_string(cc.verdict)) : nlohmann::json(nullptr);
      k["memory"] = memory_json(cc.memory);
      j["cases"].push_back(k);
    }
    j["only_in_base"] = nlohmann::json::array();
    j["only_in_other"] = nlohmann::json::array();
    for (const auto& r : c.only_in_base) j["only_in_base"].push_back(r.name);
    for (const auto& r : c.only_in_other) j["only_in_other"].push_back(r.name);
    j["geomean"] = nlohmann::json::object();
    for (const auto& m : c.means) j["geomean"][m.family] = {{"ratio", m.geomean}, {"cases", m.count}};
    all.push_back(j);
  }
  return nlohmann::json({{"comparisons", all}}).dump(2) + "\n";
}

namespace {

struct ComparisonFormat {
  const char* name;
  const char* alias;  // or null
  ComparisonPrinter print;
};

// compare's --format names: one line per format.
const ComparisonFormat kComparisonFormats[] = {
    {"table", nullptr, print_comparisons_table},
    {"md", "markdown", print_comparisons_markdown},
    {"csv", nullptr, print_comparisons_csv},
    {"json", nullptr, print_comparisons_json},
};

}  // namespace

ComparisonPrinter comparison_printer(const std::string& format) {
  std::vector<std::string> names;
  for (const auto& f : kComparisonFormats) {
    if (format == f.name || (f.alias != nullptr && format == f.alias)) return f.print;
    names.emplace_back(f.name);
  }
  throw std::invalid_argument(unknown_format_message(format, names));
}

}  // namespace trainbench
