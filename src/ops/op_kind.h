// Op kinds as one table: what each kind of layer is to trainbench. An entry carries its descriptor
// fields, the shape check beyond each field's minimum, its FLOPs per phase, its label and family, how
// `op` builds it on a device and which dispatched operators `explain` reads it from. A new op kind is
// one entry in ops/op_kinds.cpp; the descriptor parser, the op timer and the layer collector only
// walk the table.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/layers.h"
#include "ops/op_descriptor.h"

namespace trainbench {

// A descriptor field. Its default is a constant, or the value of another field ("iw" defaults to "ih").
struct OpFieldSpec {
  const char* name;
  const char* meaning;
  const char* same_as;  // nullptr: `value` is the default (when not required)
  int64_t value;
  bool required;
  int64_t minimum;
};

// A shape its fields' minimums let through but the kind cannot take: the field to point at ("" for
// none) and why.
struct OpShapeProblem {
  std::string field;
  std::string why;
};

// One layer built on the device: the tensors whose gradient is backward-data, the parameters whose
// gradient is backward-weights, and its forward.
struct OpInstance {
  std::vector<torch::Tensor> data;
  std::vector<torch::Tensor> weights;
  std::function<torch::Tensor()> forward;
  std::shared_ptr<torch::nn::Module> module;  // keeps a module-backed layer alive
};

// Where a layer is built: the device, the tensors' type, and channels-last 4-d tensors for nhwc.
struct OpBuildSettings {
  torch::Device device = torch::kCPU;
  c10::ScalarType dtype = c10::kFloat;
  bool channels_last = false;

  torch::TensorOptions options() const { return torch::TensorOptions().device(device).dtype(dtype); }
  torch::Tensor format(torch::Tensor t) const {
    return channels_last && t.dim() == 4 ? t.contiguous(at::MemoryFormat::ChannelsLast) : t;
  }
};

// A dispatched operator a kind is read from, and how: the layer call for the operator's inputs, or
// nothing for a call outside what the kind's descriptors express (may throw OpDescriptorError).
struct OpReader {
  const char* op_name;  // "aten::convolution"
  std::optional<LayerCall> (*describe)(c10::ArrayRef<const c10::IValue> inputs);
};

struct OpKind {
  const char* name;                 // conv | gemm | linear | lstm | attention | bn
  const char* family;               // conv | matmul | lstm | attention | norm
  std::vector<OpFieldSpec> fields;  // in printing order
  bool has_weights;                 // false: no backward-weights phase (the attention core)
  bool layout_matters;              // nchw and nhwc lay its tensors out differently
  std::optional<OpShapeProblem> (*check)(const OpDescriptor& d);  // nullptr: nothing beyond the fields
  double (*flops)(const OpDescriptor& d, OpPhase phase);          // one multiply-add = 2; nullptr: 0
  std::string (*label)(const OpDescriptor& d);
  OpInstance (*build)(const OpDescriptor& d, const OpBuildSettings& s);
  std::vector<OpReader> readers;
};

// Every kind, in the order help and docs list them.
const std::vector<OpKind>& op_kind_table();
// The entry named `name`, nullptr when none.
const OpKind* find_op_kind(const std::string& name);
// The kind's reader for a dispatched operator ("aten::convolution"), nullptr for one no kind is read from.
const OpReader* find_op_reader(const char* op_name);

}  // namespace trainbench
