// A Record: everything measured for one case. Produced by the measuring child, consumed by printers,
// journals and result files. Field names here are the JSON contract (docs/json-schema.md).
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/failure.h"
#include "core/statistics.h"
#include "results/memory_info.h"

namespace trainbench {

// predicted: not measured; `trainbench predict`'s estimate for a card (the record's `prediction`
// says how). Never ok, so nothing that weighs measurements takes it for one.
enum class Status { ok, oom, error, predicted };
const char* to_string(Status s);
Status status_from_string(const std::string& s);  // throws std::invalid_argument

// What a data-parallel case adds (`run --dist`, src/dist). The Record's throughput, step_time_s and
// samples_s are then the global ones: all ranks' samples per step over the slowest rank's median.
struct DistInfo {
  int world_size = 1;
  std::string backend;                     // gloo | nccl
  std::vector<double> rank_step_time_s;    // each rank's median step time, by rank
  std::vector<double> rank_comm_share;     // each rank's exposed communication time / its step time
  double comm_share = 0.0;                 // all ranks together: exposed communication / step time
  double comm_total_share = 0.0;           // all ranks together: time with an all-reduce in flight / step time
  int64_t bucket_bytes = 0;                // gradient all-reduce bucket size cap
  int64_t buckets = 0;                     // all-reduce buckets per step
  double single_process_throughput = 0.0;  // the same case in one process; NaN: not measured
  double scaling_efficiency = 0.0;         // throughput / (world_size x single_process_throughput); NaN: not measured
};

// What a case with real input data adds (`run --data`, src/data). Wait figures are over the measured
// steps; the verdict is docs/methodology.md's rule ("Real data").
struct DataInfo {
  std::string source;  // the --data path
  std::string kind;    // images | tokens
  int64_t files = 0;   // image files, or tokens in the token file
  int loader_threads = 0;
  double loader_samples_s = 0.0;  // the loader's capacity: samples per second of thread work x threads
  double loader_mb_s = 0.0;       // file bytes read per second, at that capacity
  double model_samples_s = 0.0;   // what the step consumes without waiting: batch / median(step - wait)
  double mean_wait_s = 0.0;       // data wait per step (time the step waited for its batch)
  double median_wait_s = 0.0;
  double wait_share = 0.0;  // mean wait / mean step time
  // GPU cases: the median step's wait for the host-to-device copy its batch still needed (the part of
  // the copy the previous step did not hide), inside the step's time, apart from the data wait. 0 on CPU.
  double median_copy_s = 0.0;
  std::string transfer = "float";  // images: float (normalized on the host) | uint8 (normalized on the device)
  int64_t skipped_files = 0;       // corrupt or non-JPEG files skipped
  std::string first_skipped;       // the first one; empty when none
  std::string first_skipped_reason;  // why it was skipped; empty when none
  int64_t max_image_pixels = 0;      // images: the pixel limit the loader applied (0: none recorded)
  std::string verdict;             // input-bound | compute-bound
  int threads_needed = 0;          // loader threads the model's rate needs at the measured per-thread rate
};

// A layer's share of a predicted step (the slowest ones, largest first).
struct LayerShare {
  std::string label;   // "conv 3x3 64->64" or the op's name
  double share = 0.0;  // of the predicted step time
};

// A predicted step on several GPUs (`predict --gpus`, predict/scaling.h): data parallel, one replica per
// GPU at the record's batch each, gradients all-reduced in a ring.
struct ScalingPoint {
  int gpus = 1;
  int nodes = 1;
  std::string interconnect;  // "nvlink4" or "nvlink4+8xib-ndr"
  double step_time_s = 0.0;  // one step of every GPU: compute + exposed all-reduce
  double throughput = 0.0;   // all GPUs together
  double efficiency = 0.0;   // throughput / (gpus x one GPU's)
  double allreduce_s = 0.0;  // the gradients' ring all-reduce
  double exposed_s = 0.0;    // of it, what backward does not hide
};

// What a predicted record adds (`trainbench predict`, docs/prediction.md). The Record's throughput and
// step_time_s.median are the prediction; this says how it was made and how far to trust it.
struct PredictionInfo {
  std::string method;            // spec-sheet | profile
  std::string device_id;         // the catalogue row (`trainbench devices`)
  std::string device_name;       // the row's name
  std::string catalogue_source;  // the row's public source
  std::string source_device;     // profile: the device the profile was measured on; empty for spec-sheet
  std::string source_file;       // profile: the results file it came from; empty for spec-sheet
  std::string constants;         // the fitted constants' version (docs/prediction.md)
  double step_time_low_s = 0.0;  // the interval of the step time
  double step_time_high_s = 0.0;
  double throughput_low = 0.0;   // batch / step_time_high_s
  double throughput_high = 0.0;  // batch / step_time_low_s
  // Of the predicted step: time bound by arithmetic, by memory traffic, and by the per-kernel floor.
  double compute_share = 0.0;
  double memory_share = 0.0;
  double launch_share = 0.0;
  std::vector<LayerShare> slowest_layers;
  // Memory on the card at the requested batch (tensors x the allocator's overhead + the runtime's
  // context), whether it fits the card, and the largest batch that does with its interval (0: none).
  int64_t memory_bytes = 0;
  std::optional<bool> fits;
  int64_t largest_batch = 0;
  int64_t largest_batch_low = 0;
  int64_t largest_batch_high = 0;
  std::string notes;  // what the prediction assumed beyond the method (a missing figure, a fallback)
  std::vector<ScalingPoint> scaling;  // `--gpus`: the step on each GPU count; empty otherwise
};

struct Record {
  std::string name;  // the case descriptor; `trainbench run --case NAME` reruns it
  std::string model;
  int64_t batch_size = 0;
  std::string device;     // "cpu", "cuda:0"
  std::string precision;  // fp32 | fp16 | bf16 | fp16-pure | bf16-pure
  std::string layout;     // nchw | nhwc
  std::string optimizer;  // sgd | momentum | adam | adamw
  bool forward_only = false;
  int threads = 0;  // intra-op threads the case ran with
  Status status = Status::error;
  std::string error;        // one line; empty when ok
  double throughput = 0.0;  // samples per second = batch_size / median step time
  std::string unit = "images/s";
  double tokens_per_s = 0.0;      // sequence workloads: throughput x sequence length; else 0
  Summary step_time_s;            // over the measured steps, seconds
  std::vector<double> samples_s;  // raw step times, seconds, in order
  long warmup_steps = 0;
  double warmup_time_s = 0.0;  // the warm-up steps together, seconds (not in the statistics)
  std::string stop_reason;     // converged | max_time | max_steps
  // The --max-noise target (fraction) and whether step_time_s.median_noise met it. A case that stopped
  // on a limit (max_time, max_steps) may miss it: printers mark such rows. nullopt (null): not
  // measured (failed cases, files written before the field existed).
  double noise_target = std::numeric_limits<double>::quiet_NaN();
  std::optional<bool> noise_target_met;
  // The first measured steps were still slower than the rest (more than 10%): the warm-up ended before
  // the step time settled (a fixed --warmup, or a limit). nullopt (null): not measured.
  std::optional<bool> still_settling;
  // The memory limit the case ran under (--memory-limit: RLIMIT_AS on a CPU, the caching allocator's
  // cap on a GPU), in bytes; 0: none (or a file written before the field).
  int64_t memory_limit_bytes = 0;
  double flops_per_step = 0.0;   // FLOPs per step: training per layer (core/flops.h); forward-only: forward
  double achieved_gflops = 0.0;  // flops_per_step / median / 1e9
  // achieved_gflops as % of the device's measured peak for this precision (PeakInfo::peak_for) (`trainbench peak`);
  // NaN (null in JSON) when no peak was measured for this device and thread count.
  double percent_of_peak = std::numeric_limits<double>::quiet_NaN();
  // Language models (Workload::model_flops_per_step): model FLOPs per step by the PaLM formula and, with
  // activation checkpointing, hardware FLOPs (the recomputed forward added); 0 where not defined. MFU / HFU:
  // those per second over the measured peak of the case's precision, as fractions; NaN (null) when undefined.
  double model_flops_per_step = 0.0;
  double hardware_flops_per_step = 0.0;
  double mfu = std::numeric_limits<double>::quiet_NaN();
  double hfu = std::numeric_limits<double>::quiet_NaN();
  int64_t parameters = 0;
  int64_t peak_memory_bytes = 0;              // child max RSS on CPU; allocator peak on GPU
  double wall_time_s = 0.0;                   // the whole case, child start to record, as the parent saw it
  std::map<std::string, std::string> params;  // workload parameters (e.g. bert layers); empty for CNNs
  // GPU path (fields added within schema 1; files without them read as the defaults here).
  int64_t peak_reserved_bytes = 0;        // GPU caching allocator's peak reserved bytes; 0 on CPU
  std::string tf32 = "n/a";               // on | off (GPU cases) | n/a (CPU)
  std::string algorithm_search = "none";  // cudnn benchmark | miopen find | none
  int64_t skipped_steps = 0;              // fp16: measured steps whose optimizer step the loss scaler skipped
  double loss_scale = std::numeric_limits<double>::quiet_NaN();         // fp16: the scale at the end; else NaN (null)
  double mean_sm_clock_mhz = std::numeric_limits<double>::quiet_NaN();  // over kept steps; NaN (null): not read
  int64_t throttled_samples = 0;  // steps dropped for an SM clock under 75% of the default
  // Energy over the measured steps (core/energy.h); NaN / empty (null) where no counter was read.
  double energy_j_per_sample = std::numeric_limits<double>::quiet_NaN();
  double mean_power_w = std::numeric_limits<double>::quiet_NaN();
  std::optional<std::string> energy_source;  // nvml | rapl
  std::optional<DistInfo> dist;      // data-parallel cases only; null otherwise (and in files before it existed)
  std::optional<DataInfo> data;      // --data cases only; null for synthetic data (and in older files)
  std::optional<MemoryInfo> memory;  // where the bytes went (src/memory); null when not measured (older files)
  std::optional<PredictionInfo> prediction;  // status predicted only; null for every measured record
  // A TorchScript model (`--model FILE.pt`): the file's size and SHA-256 (lower-case hex), so a row names
  // exactly which model ran. 0 and empty (absent in JSON) for built-in models and in older files.
  int64_t model_file_bytes = 0;
  std::string model_file_sha256;

  bool ok() const { return status == Status::ok; }
  bool predicted() const { return status == Status::predicted; }
};

inline Status status_of(const Failure& f) { return f.out_of_memory ? Status::oom : Status::error; }
// A failure as `r`'s status (oom or error) and one-line error; for Record and OpRecord alike.
template <class R>
void set_failure(R& r, const Failure& f) {
  r.status = status_of(f);
  r.error = f.line;
}

// JSON both ways (record.cpp). Non-finite numbers are written as null and read back as NaN.
nlohmann::json to_json(const Record& r);
// Throws std::runtime_error naming the missing or mistyped field, e.g. `field "throughput": missing`.
Record record_from_json(const nlohmann::json& j);

// nlohmann ADL hooks, so `json j = record;` and `j.get<Record>()` work too.
void to_json(nlohmann::json& j, const Record& r);
void from_json(const nlohmann::json& j, Record& r);

}  // namespace trainbench
