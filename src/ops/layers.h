// The layers of a model, read from the operators LibTorch dispatches while one training step runs:
// convolutions, linear layers, LSTMs, batch norms and the attention core (which models mark with a
// "trainbench::attention" record scope), each with its real input shape. An operator inside another
// collected one (the matrix products of a linear layer, of an LSTM) belongs to the outer one.
#pragma once
#include <functional>
#include <vector>

#include "ops/op_descriptor.h"

namespace trainbench {

struct LayerCall {
  OpDescriptor op;
  bool input_grad = true;  // the layer's input needs a gradient (false for a model's first layer)
  int64_t count = 1;       // calls with this shape per step
};

// Runs `fn` (e.g. one training step) and returns each distinct layer shape with its count, in order
// of first call. Only the forward calls are counted: backward operators have other names.
std::vector<LayerCall> collect_layers(const std::function<void()>& fn);

}  // namespace trainbench
