// Layer-level results: one op timed alone (OpRecord), a device's measured ceilings (PeakInfo) and a
// model's step broken into its layers (Explanation). Plain data with JSON both ways; produced by
// src/ops, read by printers and the report. Field names are the contract in docs/json-schema.md.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/statistics.h"
#include "results/record.h"

namespace trainbench {

// The type `peak` measures its convolution ceiling in (a dtype_names() entry).
inline const std::string kConvCeilingType = "fp32";

struct OpPhaseRecord {
  std::string phase;  // fwd | bwd_data | bwd_weights
  Summary time_s;
  std::vector<double> samples_s;
  double flops = 0.0;            // of one call of this phase; 0 where not counted
  double achieved_gflops = 0.0;  // flops / median / 1e9; 0 where not counted
  std::string stop_reason;
};

struct OpRecord {
  std::string name;   // the op descriptor, e.g. conv:mb32ic64ih56oc64kh3ph1g64
  std::string kind;   // conv | gemm | linear | lstm | attention | bn
  std::string label;  // "depthwise conv 3x3 g=64"
  std::string device;
  std::string precision;
  std::string layout;
  int threads = 0;
  Status status = Status::error;
  std::string error;
  std::vector<OpPhaseRecord> phases;

  bool ok() const { return status == Status::ok; }
  // Sum of the phases' medians: one training call of the layer.
  double total_time_s() const;
  double total_flops() const;
};

// A device's ceilings, measured by `trainbench peak` with LibTorch ops.
struct PeakInfo {
  std::string device;  // cpu | cuda:0
  std::string device_name;
  int threads = 0;
  std::string libtorch_version;
  std::string measured_at;                              // ISO 8601 UTC
  std::map<std::string, double> gemm_gflops;            // precision -> large square GEMM GFLOP/s
  std::map<std::string, std::string> gemm_unsupported;  // precision -> why it could not run
  int64_t gemm_size = 0;                                // M = N = K
  double copy_gbps = 0.0;                               // bytes read + written per second, large copy
  int64_t copy_bytes = 0;                               // size of the copied tensor
  double conv_gflops = 0.0;                             // kConvCeilingType 3x3 convolution, forward
  std::string conv_op;                                  // its op descriptor

  // The ceiling a case in `precision` is measured against: its type's GEMM (fp16/bf16 autocast and
  // -pure share it), or for fp32 the convolution when that ran faster (oneDNN's convolutions can beat
  // the BLAS GEMM on CPUs). NaN when not measured.
  double peak_for(const std::string& precision) const;
  // The same for a case that ran with `tf32` ("on", "off", "n/a": Record::tf32): an fp32 case with TF32
  // on ran its matrix products on TF32 tensor cores, so its ceiling is the GEMM measured with TF32 on
  // (gemm_gflops["tf32"], GPUs only); NaN when that was not measured (a cache written before it), never
  // the IEEE fp32 GEMM, which would overstate the case's share several times.
  double peak_for(const std::string& precision, const std::string& tf32) const;
};

struct ExplainAlternative {
  std::string precision;
  std::string layout;
  Status status = Status::error;
  std::string error;
  double time_s = 0.0;   // one training call, as OpRecord::total_time_s
  double speedup = 0.0;  // the layer's time / this time (> 1: faster)
};

struct ExplainLayer {
  std::string op;  // op descriptor
  std::string label;
  std::string family;      // conv | matmul | lstm | attention | norm
  int64_t count = 0;       // calls per forward pass
  bool input_grad = true;  // false: first layer, no bwd_data in training
  Status status = Status::error;
  std::string error;
  double fwd_s = 0.0, bwd_data_s = 0.0, bwd_weights_s = 0.0;  // medians of one call
  double time_s = 0.0;  // count x (fwd + bwd_data + bwd_weights): this layer's part of a step
  double flops = 0.0;   // count x training FLOPs of one call
  double achieved_gflops = 0.0;
  double percent_of_peak = 0.0;  // of the peak for the precision; NaN when no peak is known
  double share = 0.0;            // time_s / measured step time
  bool flagged = false;
  std::string finding;                           // one line when flagged
  std::vector<ExplainAlternative> alternatives;  // other layout / precision, flagged layers only
};

struct Explanation {
  std::string case_name;       // the model case explained (a run descriptor)
  double step_time_s = 0.0;    // the whole training step, measured (median)
  double layers_time_s = 0.0;  // sum of the layers' time_s
  double other_time_s = 0.0;   // step - layers - data_wait - copy: what the layers timed alone do not account for
  // Real data (--data): the step's input-pipeline rows, outside the layers. data_wait_s: the median step's
  // wait for its batch (the record's data.median_wait_s); copy_s: the host-to-device copy the step waited
  // for after its batch was ready (GPU cases; 0 on CPU, where the batch is made in host memory). Both 0
  // for synthetic data.
  bool real_data = false;
  double data_wait_s = 0.0;
  double copy_s = 0.0;
  double peak_gflops = 0.0;           // peak used for "% of peak"; NaN when none was measured
  std::vector<ExplainLayer> layers;   // sorted by time, largest first
  std::vector<std::string> findings;  // the flagged layers' lines and the layout/precision advice
};

nlohmann::json to_json(const OpRecord& r);
OpRecord op_record_from_json(const nlohmann::json& j);  // throws std::runtime_error naming the field
nlohmann::json to_json(const PeakInfo& p);
PeakInfo peak_info_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Explanation& e);
Explanation explanation_from_json(const nlohmann::json& j);

}  // namespace trainbench
