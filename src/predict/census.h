// A step's census: every operator a model's training step runs in its forward, with what it computes
// and moves, taken once on this machine's CPU (ops/census.cpp) at two batch sizes, and the tensor peak
// of the step at each. The method (predict/method.h) carries it to any card of the catalogue: each
// count is linear in the batch, so the census at any batch is read off the line through the two.
// Torch-free: the numbers only.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace trainbench::predict {

// What an operator's time is bound by on a GPU, and which efficiency it takes (docs/prediction.md).
// conv, matmul, lstm, attention: arithmetic (a product); memory: memory traffic (normalisation,
// activations, element-wise, pooling, embedding, loss).
enum class OpClass { conv, matmul, lstm, attention, memory };
const char* to_string(OpClass c);
OpClass op_class_from_string(const std::string& s);  // throws std::invalid_argument

struct CensusOp {
  std::string name;        // the dispatched operator ("aten::conv2d") or "trainbench::attention"
  std::string label;       // what people read ("conv 3x3 64->64", "aten::relu_")
  std::string descriptor;  // the layer's op descriptor where an op kind reads it (`explain` names layers so); else ""
  OpClass op_class = OpClass::memory;
  // FLOPs (one multiply-add = 2) by phase: forward, backward to the input, backward to the weights.
  double flops_fwd = 0.0, flops_bwd_data = 0.0, flops_bwd_weights = 0.0;
  // Floating-point elements the forward's kernels read and write: activations (their type follows the
  // precision) and parameters (read once per call).
  double act_elems = 0.0;
  double weight_elems = 0.0;
  double other_bytes = 0.0;  // integer and boolean tensors (indices, masks), in bytes
  // The backward of a memory-bound operator: elements read and written (1.5x the forward's activations
  // for an element-wise op: the output's gradient and the saved input read, the input's gradient
  // written; an embedding's gradient is the whole table). 0 when nothing needs its gradient.
  double bwd_elems = 0.0;
  // A product's output as a matrix: rows x columns, `gemm_batch` of them (for wave quantization).
  double gemm_m = 0.0, gemm_n = 0.0, gemm_batch = 1.0;
  // Its float outputs' elements, whether CUDA autocast would make them fp32 (else 16-bit), and the
  // elements of the fp32 copies autocast makes of 16-bit inputs for an operator it runs in fp32.
  double out_elems = 0.0;
  bool out_wide = true;
  double cast_elems = 0.0;
  int kernels = 1;            // kernels its forward launches (leaf operators that compute)
  bool has_backward = false;  // something needs its gradient
  // attention only: the written-out form (scores, softmax, dropout, the two products) as the census
  // saw it: elements moved and kernels launched, and the elements it keeps for backward that a fused
  // kernel (flash, memory-efficient) does not keep (the probabilities and the dropout's mask).
  double math_elems = 0.0;
  int math_kernels = 0;
  double math_saved_elems = 0.0;
};

struct StepCensus {
  std::string model;
  std::map<std::string, std::string> params;  // the workload's parameters, as the case's descriptor has them
  std::string optimizer;                      // sgd | momentum | adam | adamw
  std::string layout;                         // nchw | nhwc
  std::string unit;                           // images/s, sequences/s
  int64_t tokens_per_sample = 0;              // sequence workloads: the sequence length; else 0
  std::string libtorch_version;               // of the census
  int64_t batch1 = 0, batch2 = 0;             // the two batches it was taken at
  std::vector<CensusOp> ops1, ops2;           // the same operators, in order, at batch1 and batch2
  int64_t parameters = 0;                     // trainable parameters
  int64_t parameter_tensors = 0;
  // The CPU's exact tensor bytes (fp32): the peak over the whole step, and those live when the forward
  // has ended (every activation backward needs), at batch1 and batch2.
  double tensor_peak1 = 0.0, tensor_peak2 = 0.0;
  double forward_live1 = 0.0, forward_live2 = 0.0;
  double model_flops_per_sample = 0.0;  // the forward+backward FLOPs of the counted products, per sample

  // The census at `batch`: every count on the line through batch1 and batch2 (kernels as measured).
  std::vector<CensusOp> ops_at(int64_t batch) const;
  // Activations per sample: the slope of the bytes live after the forward (the step's peak may be the
  // optimizer's, the same at every small batch).
  double activation_bytes_per_sample() const;
  // What lives after the forward besides the activations: parameters and buffers.
  double forward_base_bytes() const;
  // Under autocast, the forward's new tensors per sample in their types over the same in fp32: the
  // share of the activations' fp32 bytes autocast keeps (0.5 when everything is 16-bit).
  double autocast_activation_ratio() const;
};

// JSON both ways (`predict --census-out FILE` writes one; `--census FILE` reads it back). Reading
// checks every count (finite, not negative), the two operator lists (equal length, the same operators)
// and the batches (1 <= batch1 < batch2); throws std::runtime_error naming the field.
nlohmann::json to_json(const StepCensus& c);
StepCensus census_from_json(const nlohmann::json& j);

}  // namespace trainbench::predict
