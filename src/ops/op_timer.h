// Times one layer alone (DeepBench style): forward, backward-data and backward-weights separately,
// each with its own warm-up and stopping rule, on any device, precision and layout. Never prints.
#pragma once
#include <string>
#include <vector>

#include "core/device.h"
#include "core/layout.h"
#include "core/precision.h"
#include "core/stopping.h"
#include "ops/op_descriptor.h"
#include "results/op_record.h"

namespace trainbench {

struct OpSettings {
  DeviceSpec device;
  Precision precision;             // tensors in its dtype ("-pure" and autocast alike)
  Layout layout = Layout::nchw;    // conv and bn only
  MeasureSettings measure;         // per phase
  // false for a model's first layer: its input needs no gradient, so training runs no bwd_data.
  bool input_grad = true;
};

// The stopping rule `op` and `explain` use by default: short phases, a few samples each.
MeasureSettings default_op_measure();

// Failures are values: status oom or error with a one-line reason.
OpRecord time_op(const OpDescriptor& op, const OpSettings& s);

}  // namespace trainbench
