#include "results/printer_memory.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/device_text.h"
#include "results/number_format.h"

namespace trainbench {
namespace {

std::string bytes_or_dash(double v) {
  return std::isfinite(v) ? format_bytes(static_cast<int64_t>(std::llround(v))) : "-";
}

}  // namespace

std::string off_the_line(const MemoryFit& f) {
  return fmt::format("{} {:.1f}% off the line",
                     f.batches.size() > 3 ? "the smaller batches are up to" : "the smallest batch is",
                     100.0 * f.linearity_error);
}

namespace {

// The fit's lines and its predictions (a `memory` run's fitted record).
std::string print_fit(const MemoryInfo& m) {
  std::string out;
  const MemoryFit& f = *m.fit;
  std::string points;
  for (size_t i = 0; i < f.batches.size(); ++i) {
    points += fmt::format("{}b{}: {}", i == 0 ? "" : ", ", f.batches[i], format_bytes(f.peaks[i]));
  }
  out += fmt::format("  fit ({}): {} + {} x batch   [{}]\n", f.basis, bytes_or_dash(f.fixed_bytes),
                     bytes_or_dash(f.per_sample_bytes), points);
  const std::vector<int64_t>& oom_batches = f.oom_batches;
  if (!oom_batches.empty()) {
    out += fmt::format("  batch{} {} ran out of memory: fitted on the {} smaller batches that trained\n",
                       oom_batches.size() == 1 ? "" : "es", fmt::join(oom_batches, ", "), f.batches.size());
  }
  if (!f.set_aside_batches.empty()) {
    out += fmt::format(
        "  batch{} {} set aside: the peak there did not yet grow with the batch (the activations had not reached "
        "it)\n",
        f.set_aside_batches.size() == 1 ? "" : "es", fmt::join(f.set_aside_batches, ", "));
  }
  if (std::isnan(f.linearity_error)) {
    out += oom_batches.empty() ? "  linearity: not checked (two batches)\n"
                               : "  linearity: not checked (only two batches trained)\n";
  } else if (f.linear) {
    out += fmt::format("  linearity: ok ({})\n", off_the_line(f));
  } else {
    out += fmt::format(
        "  linearity: NOT LINEAR: {} (a workspace that grows in steps?); predictions from the line alone are rough\n",
        off_the_line(f));
  }
  if (m.predictions.empty()) return out;
  bool ranges = false;
  for (const auto& p : m.predictions) ranges = ranges || p.largest_batch_high > 0;
  // Where each answer comes from: tries under the size itself, the measured batches around it, or the
  // line beyond them.
  auto from = [](const MemoryPrediction& p) {
    if (p.trained_under_limit > 0 || p.out_of_memory_under_limit > 0) {
      return p.out_of_memory_under_limit > 0 ? fmt::format("tried under it (line: {})", p.line_batch)
                                             : fmt::format("tried under it, none ran out (line: {})", p.line_batch);
    }
    return std::string(p.largest_batch_high > 0 ? "the line" : "measured batches");
  };
  // The last column is not padded: no line ends in spaces.
  size_t from_width = 0;
  if (m.requested_batch > 0) {
    for (const auto& p : m.predictions) from_width = std::max(from_width, from(p).size());
  }
  out += fmt::format("  {:>10}  {:>14}{}  {:<{}}{}\n", "memory", "largest batch",
                     ranges ? fmt::format("  {:>15}", "interval") : "", "from", from_width,
                     m.requested_batch > 0 ? fmt::format("  batch {}", m.requested_batch) : "");
  for (const auto& p : m.predictions) {
    std::string interval;
    if (ranges) {
      interval = fmt::format("  {:>15}", p.largest_batch_high > 0
                                             ? fmt::format("{} to {}", p.largest_batch_low, p.largest_batch_high)
                                             : "-");
    }
    std::string verdict;
    if (p.requested_fits) {
      // A try under the size settles it; between the tries, the line's margin is all there is.
      const int64_t b = m.requested_batch;
      if (p.trained_under_limit > 0 && b <= p.trained_under_limit) {
        verdict = fmt::format("  fits: batch {} trained under it", p.trained_under_limit);
      } else if (p.out_of_memory_under_limit > 0 && b >= p.out_of_memory_under_limit) {
        verdict = fmt::format("  does not fit: batch {} ran out under it", p.out_of_memory_under_limit);
      } else {
        verdict = *p.requested_fits ? fmt::format("  fits, {} to spare", format_bytes(p.margin_bytes))
                                    : fmt::format("  does not fit, {} short", format_bytes(-p.margin_bytes));
      }
    }
    out += fmt::format("  {:>10}  {:>14}{}  {:<{}}{}\n", format_size(p.size_bytes), p.largest_batch, interval, from(p),
                       from_width, verdict);
  }
  return out;
}

// A CPU run's sizes as CUDA cards (memory.gpu_target).
std::string print_gpu_target(const GpuTarget& g) {
  std::string out = fmt::format(
      "  as a CUDA card (from the tensors: {} outside the allocator, which reserves {:g}x them, at most {:g}x):\n",
      format_bytes(g.context_bytes), g.reserved_per_tensor_byte, g.reserved_per_tensor_byte_max);
  out += fmt::format("  {:>10}  {:>14}  {:>15}\n", "card", "largest batch", "interval");
  for (const auto& p : g.predictions) {
    out += fmt::format("  {:>10}  {:>14}  {:>15}\n", format_size(p.size_bytes), p.largest_batch,
                       fmt::format("{} to {}", p.largest_batch_low, p.largest_batch_high));
  }
  return out;
}

}  // namespace

std::string print_memory(const Record& r) {
  if (!r.memory) return "";
  const MemoryInfo& m = *r.memory;
  std::string out = fmt::format("{} ({})\n", r.name, m.source);
  auto row = [&](const char* what, const std::string& value, const std::string& note = "") {
    out += fmt::format("  {:<26}{:>12}{}\n", what, value, note.empty() ? "" : "  " + note);
  };
  row("parameters + buffers", format_bytes(m.parameters_bytes));
  row("gradients", format_bytes(m.gradients_bytes), "left live by the first backward");
  row("optimizer state", format_bytes(m.optimizer_bytes), r.optimizer);
  if (m.comm_buffer_bytes > 0) row("all-reduce buckets", format_bytes(m.comm_buffer_bytes), "data-parallel");
  if (m.fit) {
    row("fixed (fit)", format_bytes(m.fixed_bytes), "tensor peak at batch 0");
  } else {
    row("fixed", format_bytes(m.fixed_bytes),
        m.comm_buffer_bytes > 0 ? "parameters + gradients + optimizer + buckets"
                                : "parameters + gradients + optimizer");
  }
  row("activations per sample", bytes_or_dash(m.activations_bytes_per_sample),
      m.fit ? "slope of the tensor peak" : "(peak - fixed) / batch, inputs included");
  row("input batch", format_bytes(m.inputs_bytes), r.data ? "the batch the model holds" : "synthetic, on the device");
  row(fmt::format("peak at batch {}", r.batch_size).c_str(), format_bytes(m.peak_bytes), "tensors, exact");
  if (m.max_rss_bytes > 0) row("max RSS", format_bytes(m.max_rss_bytes), "libraries and heap slack included");
  if (m.footprint_peak_bytes > 0) {
    row(is_gpu_device_text(r.device) ? "peak reserved" : "address space grown", format_bytes(m.footprint_peak_bytes),
        m.loader_address_space_bytes > 0 ? "the loader's left out" : "");
  }
  if (m.loader_address_space_bytes > 0 || m.loader_peak_bytes > 0) {
    row("loader (not the model's)", format_bytes(m.loader_address_space_bytes),
        fmt::format("address space, above any --memory-limit; its queue's tensors peaked at {}",
                    format_bytes(m.loader_peak_bytes)));
  }
  if (m.fit) out += print_fit(m);
  if (m.gpu_target) out += print_gpu_target(*m.gpu_target);
  return out;
}

}  // namespace trainbench
