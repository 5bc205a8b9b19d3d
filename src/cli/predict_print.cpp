// `predict`'s table: per card and case the predicted throughput with its interval, the step's shares,
// memory and the largest batch; the scaling table; and what the predictions assume.
#include <iostream>

#include <fmt/format.h>

#include "cli/predict.h"
#include "predict/gpu_memory.h"
#include "predict/scaling.h"
#include "results/number_format.h"
#include "results/text_table.h"

namespace trainbench::cli {
namespace {

std::string percent(double x) { return fmt::format("{:.0f}%", 100.0 * x); }

std::string predictions_table(const std::vector<Record>& records) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : records) {
    const auto& p = *r.prediction;
    rows.push_back({p.device_id, fmt::format("{}:b{}:{}", r.model, r.batch_size, r.precision),
                    fmt::format("{:.4g}", r.throughput),
                    fmt::format("{:.4g}-{:.4g}", p.throughput_low, p.throughput_high),
                    fmt::format("{:.2f}", r.step_time_s.median * 1e3),
                    fmt::format("{}/{}/{}", percent(p.compute_share), percent(p.memory_share), percent(p.launch_share)),
                    format_bytes(p.memory_bytes), p.fits && *p.fits ? "yes" : "no", std::to_string(p.largest_batch),
                    p.slowest_layers.empty() ? "" : p.slowest_layers.front().label});
  }
  return fitted_table({{"card"},
                       {"case"},
                       {records.empty() ? "samples/s" : records.front().unit, 0, true},
                       {"interval", 0, true},
                       {"step ms", 0, true},
                       {"compute/memory/launch", 0, true},
                       {"memory", 0, true},
                       {"fits"},
                       {"largest batch", 0, true},
                       {"slowest layer"}},
                      rows);
}

}  // namespace

// The table of predictions, the scaling table where --gpus asked for one, and what they assume.
void print_predictions(const ResultsFile& out, bool from_profile, const std::string& source_id,
                       const predict::Constants& constants, int64_t context) {
  std::cout << predictions_table(out.benchmarks);
  std::vector<std::pair<std::string, const ScalingPoint*>> scaled;
  for (const auto& r : out.benchmarks)
    for (const auto& p : r.prediction->scaling)
      scaled.emplace_back(fmt::format("{} {}:b{}:{}", r.prediction->device_id, r.model, r.batch_size, r.precision), &p);
  if (!scaled.empty()) std::cout << "\n" << predict::scaling_table(scaled);
  std::cout << fmt::format(
      "Predicted, not measured ({}; constants {}): the interval is ±{:.0f}%; memory is the step's tensors in the "
      "precision's types x {:g} (the caching allocator) + {} of context; docs/prediction.md says what each "
      "path assumes.\n",
      !from_profile ? "from each card's spec sheet" : "carried from the profile measured on " + source_id,
      constants.version, 100.0 * (!from_profile ? constants.interval : constants.profile_interval),
      kGpuReservedPerTensorByte, format_bytes(context));
}

}  // namespace trainbench::cli
