#include "results/printer_ops.h"

#include <cmath>

#include <fmt/format.h>

#include "results/number_format.h"

namespace trainbench {
namespace {

std::string ms(double s) { return std::isfinite(s) && s > 0.0 ? format_significant(s * 1e3) : "-"; }
std::string gf(double g) { return std::isfinite(g) && g > 0.0 ? format_significant(g) : "-"; }
std::string pct(double p) { return std::isfinite(p) && p > 0.0 ? format_significant(p) + "%" : "-"; }

}  // namespace

std::string print_op_table(const std::vector<OpRecord>& ops, const PeakInfo* peak) {
  std::string out = fmt::format("{:<36} {:<26} {:<9} {:<6} {:<11} {:>9} {:>7} {:>4} {:>8} {:>6}\n", "op", "layer",
                                "precision", "layout", "phase", "median ms", "±jitter", "n", "GFLOP/s", "%peak");
  out += std::string(130, '-') + "\n";
  for (const auto& r : ops) {
    if (!r.ok()) {
      out += fmt::format("{:<36} {:<26} {:<9} {:<6} {}: {}\n", r.name, r.label, r.precision, r.layout,
                         to_string(r.status), r.error);
      continue;
    }
    const double gemm = peak != nullptr ? peak->peak_for(r.precision) : NAN;
    for (const auto& p : r.phases) {
      const double m = p.time_s.median;
      out +=
          fmt::format("{:<36} {:<26} {:<9} {:<6} {:<11} {:>9} {:>7} {:>4} {:>8} {:>6}\n", r.name, r.label, r.precision,
                      r.layout, p.phase, ms(m), m > 0.0 ? format_significant(100.0 * p.time_s.jitter / m) + "%" : "-",
                      p.time_s.n, gf(p.achieved_gflops), pct(100.0 * p.achieved_gflops / gemm));
    }
  }
  return out;
}

std::string print_peak(const PeakInfo& p) {
  std::string out = fmt::format("{} ({}), {} threads, LibTorch {}, measured {}\n", p.device, p.device_name, p.threads,
                                p.libtorch_version, p.measured_at);
  for (const auto& [precision, g] : p.gemm_gflops)
    out += fmt::format("  GEMM {:<5} {}x{}x{}: {:>10} GFLOP/s\n", precision, p.gemm_size, p.gemm_size, p.gemm_size,
                       format_significant(g));
  for (const auto& [precision, why] : p.gemm_unsupported)
    out += fmt::format("  GEMM {:<5} not supported here: {}\n", precision, why);
  out += fmt::format("  copy {}: {:>10} GB/s (read + write)\n", format_bytes(p.copy_bytes),
                     format_significant(p.copy_gbps));
  out += fmt::format("  conv fp32 fwd {}: {:>10} GFLOP/s\n", p.conv_op, format_significant(p.conv_gflops));
  return out;
}

std::string print_explanation(const Explanation& e) {
  const double step = e.step_time_s;
  auto share = [&](double t) { return step > 0.0 ? fmt::format("{:.0f}%", 100.0 * t / step) : std::string("-"); };
  std::string out = fmt::format("{}: step {} ms measured; the layers timed alone {} ms ({}); ", e.case_name, ms(step),
                                ms(e.layers_time_s), share(e.layers_time_s));
  if (e.real_data) {
    out += fmt::format("data wait {} ms ({}); device copy {} ms ({}); ", format_significant(1e3 * e.data_wait_s),
                       share(e.data_wait_s), format_significant(1e3 * e.copy_s), share(e.copy_s));
  }
  out += fmt::format("other {} ms ({})\n", format_significant(1e3 * e.other_time_s), share(e.other_time_s));
  out += std::isfinite(e.peak_gflops)
             ? fmt::format("peak {} GFLOP/s (trainbench peak: the faster of GEMM and conv in this precision)\n",
                           format_significant(e.peak_gflops))
             : std::string("no peak measured for this device: run `trainbench peak` for % of peak\n");
  out += fmt::format("\n{:>6} {:>9} {:>5} {:<30} {:>8} {:>8} {:>8} {:>8} {:>6}  {}\n", "share", "time ms", "count",
                     "layer", "fwd ms", "bwd-d ms", "bwd-w ms", "GFLOP/s", "%peak", "op");
  out += std::string(130, '-') + "\n";
  for (const auto& l : e.layers) {
    if (l.status != Status::ok) {
      out += fmt::format("{:>6} {:>9} {:>5} {:<30} {}: {}  {}\n", "-", "-", l.count, l.label, to_string(l.status),
                         l.error, l.op);
      continue;
    }
    out += fmt::format("{:>6} {:>9} {:>5} {:<30} {:>8} {:>8} {:>8} {:>8} {:>6}  {}{}\n",
                       fmt::format("{:.1f}%", 100.0 * l.share), ms(l.time_s), l.count, l.label, ms(l.fwd_s),
                       l.input_grad ? ms(l.bwd_data_s) : "none", ms(l.bwd_weights_s), gf(l.achieved_gflops),
                       pct(l.percent_of_peak), l.op, l.flagged ? "  <- flagged" : "");
  }
  // Real data: the step's input rows, outside the layers (the median step's waits, as measured in it).
  if (e.real_data) {
    auto row = [&](const char* label, double t, const char* what) {
      out += fmt::format("{:>6} {:>9} {:>5} {:<30} {:>8} {:>8} {:>8} {:>8} {:>6}  {}\n",
                         step > 0.0 ? fmt::format("{:.1f}%", 100.0 * t / step) : std::string("-"),
                         format_significant(1e3 * t), "-", label, "-", "-", "-", "-", "-", what);
    };
    row("data wait", e.data_wait_s, "waiting for the loader's batch");
    row("device copy", e.copy_s, "host-to-device copy not hidden by the previous step (0 on CPU)");
  }
  if (!e.findings.empty()) {
    out += "\nfindings:\n";
    for (const auto& f : e.findings) out += "  - " + f + "\n";
  }
  return out;
}

}  // namespace trainbench
