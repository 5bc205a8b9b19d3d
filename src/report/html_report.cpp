#include "report/html_report.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/compare.h"
#include "results/number_format.h"

namespace trainbench {

const std::vector<std::string>& chartjs_candidates() {
  static const std::vector<std::string> paths = {
      "/usr/share/javascript/chart.js/chart.min.js",   // Debian libjs-chart.js 3.x
      "/usr/share/javascript/chart.js/Chart.min.js",   // older packages
      "/usr/share/nodejs/chart.js/dist/chart.min.js",  // node-chart.js
      "/usr/local/share/javascript/chart.js/chart.min.js",
  };
  return paths;
}

namespace {

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using detail::html_escape;

std::string opt(const std::optional<std::string>& s) { return s ? *s : "-"; }

// Context rows: one column per run.
std::string context_table(const std::vector<ReportRun>& runs) {
  std::vector<std::pair<std::string, std::function<std::string(const Context&)>>> rows = {
      {"device", [](const Context& c) { return c.device + " — " + c.device_name; }},
      {"device memory",
       [](const Context& c) { return c.device_memory_bytes ? format_bytes(*c.device_memory_bytes) : "-"; }},
      {"host", [](const Context& c) { return c.hostname; }},
      {"CPU",
       [](const Context& c) {
         std::string s = c.cpu_model + ", " + std::to_string(c.cpu_cores) + " CPUs";
         if (c.cpu_physical_cores) s += " (" + std::to_string(*c.cpu_physical_cores) + " cores)";
         return s;
       }},
      {"memory", [](const Context& c) { return format_bytes(c.memory_bytes); }},
      {"OS", [](const Context& c) { return c.os; }},
      {"LibTorch", [](const Context& c) { return c.libtorch_version + " (" + c.build + " build)"; }},
      {"oneDNN", [](const Context& c) { return opt(c.onednn_version); }},
      {"cuDNN / MIOpen", [](const Context& c) { return opt(c.cudnn_version) + " / " + opt(c.miopen_version); }},
      {"BLAS", [](const Context& c) { return c.blas_kind + (c.blas_library ? " — " + *c.blas_library : ""); }},
      {"threads", [](const Context& c) { return std::to_string(c.threads); }},
      {"CPU allocator", [](const Context& c) { return c.cpu_allocator; }},
      {"trainbench", [](const Context& c) { return c.trainbench_version + " (" + c.git_revision + ")"; }},
      {"started", [](const Context& c) { return c.start_time; }},
  };
  std::string h = "<table class=\"ctx\"><thead><tr><th></th>";
  for (size_t i = 0; i < runs.size(); ++i)
    h += "<th>" + std::string(i == 0 && runs.size() > 1 ? "BASE " : "") + html_escape(runs[i].label) + "</th>";
  h += "</tr></thead><tbody>\n";
  for (const auto& [title, get] : rows) {
    h += "<tr><th>" + html_escape(title) + "</th>";
    for (const auto& r : runs) h += "<td>" + html_escape(get(r.file.context)) + "</td>";
    h += "</tr>\n";
  }
  return h + "</tbody></table>\n";
}

struct Cell {
  Cell(std::string text_, std::string sort_ = "", std::string title_ = "")
      : text(std::move(text_)), sort(std::move(sort_)), title(std::move(title_)) {}
  std::string text;
  std::string sort;   // numeric sort value; empty: sort by text
  std::string title;  // hover text (the error message of a failed case)
};

Cell num_cell(double x, bool ok, const std::string& suffix = "") {
  if (!ok || !std::isfinite(x)) return {"-", ""};
  return {format_significant(x) + suffix, fmt::format("{}", x)};
}

// The median's relative noise, marked "!" with the reason as hover text when it missed the target.
Cell median_noise_cell(const Record& r, bool spread) {
  Cell c = num_cell(100.0 * relative_noise_of_median(r.step_time_s), spread, "%");
  if (spread && r.noise_target_met == false) {
    c.text += " !";
    c.title = fmt::format("missed the {:g}% noise target: stopped by {}", 100.0 * r.noise_target, r.stop_reason);
  }
  return c;
}

// Every case of every run, with the noise columns and the descriptor that reruns it.
std::string cases_table(const std::vector<ReportRun>& runs) {
  const bool with_ratio = runs.size() > 1;
  std::map<std::pair<size_t, std::string>, const CaseComparison*> ratio_of;  // (run, name) -> comparison
  std::vector<Comparison> comparisons;
  comparisons.reserve(runs.size());
  for (size_t i = 1; i < runs.size(); ++i)
    comparisons.push_back(compare_runs(runs[0].file, runs[i].file, runs[0].label, runs[i].label));
  for (size_t i = 1; i < runs.size(); ++i)
    for (const auto& cc : comparisons[i - 1].cases) ratio_of[{i, cc.other.name}] = &cc;

  std::vector<std::pair<std::string, bool>> cols = {{"run", false},        {"case (trainbench run --case …)", false},
                                                    {"family", false},     {"batch", true},
                                                    {"status", false},     {"throughput", true},
                                                    {"unit", false},       {"median step", true},
                                                    {"jitter", true},      {"CV", true},
                                                    {"noise ±", true},     {"median noise", true},
                                                    {"n", true},           {"stop", false},
                                                    {"GFLOP/s", true},     {"% of peak", true},
                                                    {"peak memory", true}, {"wall", true}};
  if (with_ratio) {
    cols.push_back({"OTHER/BASE", true});
    cols.push_back({"verdict", false});
  }
  std::string h = "<div class=\"scroll\"><table id=\"cases\" class=\"sortable\"><thead><tr>";
  for (const auto& [title, numeric] : cols)
    h += fmt::format("<th data-type=\"{}\">{}</th>", numeric ? "num" : "text", html_escape(title));
  h += "</tr></thead><tbody>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& r : runs[i].file.benchmarks) {
      const Summary& s = r.step_time_s;
      const bool ok = r.ok();
      const bool spread = ok && s.n >= 2;  // one step has no measured spread
      std::vector<Cell> cells = {
          {runs[i].label, ""},
          {r.name, ""},
          {family_title(family_of(r.model)), ""},
          {std::to_string(r.batch_size), std::to_string(r.batch_size)},
          {to_string(r.status), "", r.error},
          num_cell(r.throughput, ok),
          {r.unit, ""},
          num_cell(s.median * 1e3, ok, " ms"),
          num_cell(s.jitter * 1e3, spread, " ms"),
          num_cell(100.0 * s.cv(), spread, "%"),
          num_cell(100.0 * relative_noise(r), spread, "%"),
          median_noise_cell(r, spread),
          {std::to_string(s.n), std::to_string(s.n)},
          {noise_missed(r) ? r.stop_reason + " (noisy)" : r.stop_reason, "",
           noise_missed(r) ? "the median's noise stayed above the --max-noise target" : ""},
          num_cell(r.achieved_gflops, ok && r.achieved_gflops > 0),
          num_cell(r.percent_of_peak, ok && std::isfinite(r.percent_of_peak), "%"),
          {r.peak_memory_bytes > 0 ? format_bytes(r.peak_memory_bytes) : "-",
           r.peak_memory_bytes > 0 ? std::to_string(r.peak_memory_bytes) : ""},
          num_cell(r.wall_time_s, true, " s"),
      };
      if (with_ratio) {
        auto it = ratio_of.find({i, r.name});
        const CaseComparison* cc = it == ratio_of.end() ? nullptr : it->second;
        cells.push_back(cc && cc->ratio ? num_cell(*cc->ratio, true) : Cell{"-", ""});
        cells.push_back({cc && cc->ratio ? to_string(cc->verdict) : "", ""});
      }
      h += "<tr>";
      for (const auto& c : cells) {
        h += "<td";
        if (!c.sort.empty()) h += " data-v=\"" + c.sort + "\"";
        if (!c.title.empty()) h += " title=\"" + html_escape(c.title) + "\"";
        h += ">";
        h += html_escape(c.text) + "</td>";
      }
      h += "</tr>\n";
    }
  }
  return h + "</tbody></table></div>\n";
}

}  // namespace

namespace detail {

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace detail

std::string find_chartjs() {
  const char* env = std::getenv("TRAINBENCH_CHARTJS");
  if (env && *env) {
    if (is_file(env)) return env;
    throw ReportError(std::string("Chart.js not found at TRAINBENCH_CHARTJS=") + env +
                      "; install it with `apt-get install libjs-chart.js` or point TRAINBENCH_CHARTJS at chart.min.js");
  }
  for (const auto& p : chartjs_candidates())
    if (is_file(p)) return p;
  throw ReportError("Chart.js not found (looked in " + chartjs_candidates().front() +
                    " and 3 other places); install it with `apt-get install libjs-chart.js` or set TRAINBENCH_CHARTJS "
                    "to a chart.min.js");
}

std::string html_report(const std::vector<ReportRun>& runs, const std::string& chartjs) {
  size_t cases = 0;
  for (const auto& r : runs) cases += r.file.benchmarks.size();
  std::string files;
  for (const auto& r : runs) files += (files.empty() ? "" : ", ") + r.label;
  const std::string title = "trainbench report: " + files;

  std::string body = "<h1>trainbench report</h1>\n<p class=\"sub\">" +
                     html_escape(fmt::format("{} run(s), {} case(s): {}", runs.size(), cases, files)) + "</p>\n";
  body += "<h2>Runs</h2>\n" + context_table(runs);
  body += "<div id=\"charts\"></div>\n";
  body +=
      "<h2>All cases</h2>\n<p class=\"note\">Click a column title to sort. <i>noise ±</i> is jitter / median "
      "(1.4826 × MAD of the step times); a comparison calls a case <i>same</i> when |ratio − 1| is within "
      "√(noise<sub>BASE</sub>² + noise<sub>OTHER</sub>²). <i>median noise</i> is the standard error of the "
      "median over the median (what <code>--max-noise</code> targets); <b>!</b> marks a case that stopped on a "
      "limit before reaching its target.</p>\n";
  size_t missed = 0;
  for (const auto& run : runs)
    for (const auto& r : run.file.benchmarks) missed += r.ok() && r.noise_target_met == false ? 1 : 0;
  if (missed > 0) {
    body += "<p class=\"note\">" +
            html_escape(fmt::format("{} case(s) missed their noise target (marked !): rerun them with a larger "
                                    "--max-time or --max-steps.",
                                    missed)) +
            "</p>\n";
  }
  body += cases_table(runs);
  body += detail::data_section(runs);
  return detail::fill_report_template(title, report_model(runs).dump(), body, chartjs);
}

void write_html_report(const std::vector<std::string>& inputs, const std::string& output) {
  std::vector<ReportRun> runs;
  for (const auto& path : inputs) runs.push_back({path, read_results(path)});
  write_html_report(runs, output);
}

std::string read_chartjs() {
  const std::string chartjs_path = find_chartjs();
  std::string chartjs = slurp(chartjs_path);
  if (chartjs.empty()) throw ReportError(chartjs_path + ": empty or unreadable; reinstall libjs-chart.js");
  return chartjs;
}

void write_page(const std::string& page, const std::string& output) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(output).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);  // a failure shows when writing
  const std::string tmp = output + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << page;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw ReportError(output + ": cannot write it");
    }
  }
  if (std::rename(tmp.c_str(), output.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw ReportError(output + ": cannot write it");
  }
}

void write_html_report(const std::vector<ReportRun>& runs, const std::string& output) {
  write_page(html_report(runs, read_chartjs()), output);
}

}  // namespace trainbench
