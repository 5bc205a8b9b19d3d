// The prediction method (docs/prediction.md): a step's census carried to a card of the catalogue.
// Per operator and phase, the time its arithmetic takes at the card's peak for the precision times an
// efficiency of its class (and the share of the card a product's tiles fill), the time its memory
// traffic takes at the card's bandwidth times an efficiency, and a floor per kernel; the larger one
// counts. The step is the larger of the card's time and the host's time to issue every kernel. The
// optimizer's update, autocast's weight casts and fp16's loss scaling are memory traffic per parameter.
// A profile measured on a GPU (`--from`) is carried operator class by operator class by the ratio of
// the two cards' times for the same work. Memory: the census's tensor line in the precision's types,
// times the caching allocator's overhead, plus the runtime's context. Torch-free.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "predict/catalogue.h"
#include "predict/census.h"

namespace trainbench::predict {

// The fitted constants (docs/prediction.md names the data each was fitted on; bench/fit_predict.py
// fits them again). Everything else in the method comes from the shapes and the catalogue.
struct Constants {
  std::string version;
  // Of the precision's dense peak: a convolution's product and a matrix product's (linear, LSTM,
  // attention), on the card's fp32 units and on its tensor (matrix) cores.
  double conv_efficiency = 0.0;
  double matmul_efficiency = 0.0;
  double conv_tensor_efficiency = 0.0;
  double matmul_tensor_efficiency = 0.0;
  double memory_efficiency = 0.0;  // of the memory bandwidth, a memory-bound kernel
  double kernel_floor_s = 0.0;     // the shortest a kernel takes on the card
  double host_per_kernel_s = 0.0;  // the host's time to issue one kernel (LibTorch's eager C++)
  // Autocast (fp16, bf16): the card's allocated bytes per sample over the census's activations in
  // autocast's types (the workspaces and transient casts that do not shrink with the types).
  double autocast_memory_factor = 0.0;
  double interval = 0.0;          // spec-sheet: the interval's relative half-width
  double profile_interval = 0.0;  // from a profile: the same
};
const Constants& fitted_constants();
// A constants file (`predict --constants FILE`, for bench/fit_predict.py): every field, each checked
// (efficiencies in (0, 1], times in [0, 1 s), intervals in [0, 1)); throws std::runtime_error naming it.
Constants constants_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Constants& c);

// What to predict, besides the census's model: the case's batch and precision on the card.
struct Request {
  int64_t batch = 0;
  std::string precision = "fp32";  // fp32 | fp16 | bf16 | fp16-pure | bf16-pure
  bool tf32 = false;               // fp32 products on TF32 tensor cores (--tf32 on)
  bool fused_attention = true;     // the card runs attention as one kernel (sdpa), not written out
  int64_t context_bytes = 0;       // the runtime's context outside the allocator (predict/gpu_memory.h)
};

// The peak a precision's products run at on a card, and what it had to assume.
struct PeakChoice {
  double tflops = 0.0;
  bool tensor = false;  // the figure is a tensor (matrix) core's
  std::string figure;   // "bf16 tensor", "fp32"
  std::string note;     // "" or why another figure was taken ("no fp16 tensor cores: its fp32 figure")
};
PeakChoice peak_for(const DeviceSpec& d, const std::string& precision, bool tf32);
// Bytes per element of activations in a precision (4 for fp32, 2 for the 16-bit ones).
double element_bytes(const std::string& precision);

// The time of one operator in one phase on a card, and what bounds it.
enum class Bound { compute, memory, floor };
struct PhaseTime {
  double seconds = 0.0;
  Bound bound = Bound::floor;
};

// Share of the card a product's tiles fill: tiles of 128 x 128 outputs, waves of one tile per compute
// unit; the last wave's idle units are the loss (1 for an empty shape).
double wave_fill(double m, double n, double batch, int64_t compute_units);

struct Card {
  DeviceSpec spec;
  PeakChoice peak;
};

// Every operator's phases, plus the per-parameter updates, on `card`: one entry per operator and
// phase that does work, with its label. Exposed for tests and `--from`.
struct OpPhaseTime {
  int op = -1;    // index into the census's operators; -1 for the per-parameter updates
  int phase = 0;  // 0 forward, 1 backward to the input, 2 backward to the weights
  std::string label;
  OpClass op_class = OpClass::memory;
  PhaseTime time;
  int kernels = 0;
};
std::vector<OpPhaseTime> op_times(const StepCensus& census, const std::vector<CensusOp>& ops, const Card& card,
                                  const Request& r, const Constants& k);

struct MemoryForecast {
  double fixed_bytes = 0.0;       // tensors that do not grow with the batch, in the precision's types
  double per_sample_bytes = 0.0;  // tensors per sample
  int64_t bytes = 0;              // on the card at the request's batch: reserved + context
  bool fits = false;
  int64_t largest_batch = 0, largest_batch_low = 0, largest_batch_high = 0;
};
MemoryForecast forecast_memory(const StepCensus& census, const DeviceSpec& d, const Request& r, const Constants& k);

struct StepForecast {
  double step_s = 0.0, low_s = 0.0, high_s = 0.0;
  double device_s = 0.0, host_s = 0.0;
  double compute_s = 0.0, memory_s = 0.0, launch_s = 0.0;  // the step split by what bounds it
  std::vector<std::pair<std::string, double>> slowest;     // labels with their share, largest first (5)
  PeakChoice peak;
  MemoryForecast memory;
};

// The spec-sheet path.
StepForecast forecast(const StepCensus& census, const DeviceSpec& d, const Request& r, const Constants& k);

// A per-layer profile measured on a GPU (`explain`'s layers on the card: each layer's descriptor, calls
// per step and one call's time per phase) and what the layers timed alone did not account for.
struct ProfileLayer {
  std::string descriptor;
  int64_t count = 1;
  double phase_s[3] = {0.0, 0.0, 0.0};  // forward, backward to the input, backward to the weights
};
struct Profile {
  double step_s = 0.0;   // the measured step
  double other_s = 0.0;  // step - the layers' sum
  std::vector<ProfileLayer> layers;
};

// The profile path: each layer's phase measured on `source` (a card of the catalogue) times the ratio of
// the method's times for that operator and phase on `target` and on `source`; the rest of the step
// (`other_s`) times the ratio of the method's times for every operator no layer names plus the
// per-parameter updates. A layer the census does not have carries by the step's ratio. The interval is
// the profile's (Constants::profile_interval).
StepForecast carry(const StepCensus& census, const Profile& profile, const DeviceSpec& source, const DeviceSpec& target,
                   const Request& r, const Constants& k);

}  // namespace trainbench::predict
