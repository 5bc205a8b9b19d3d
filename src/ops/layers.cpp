#include "ops/layers.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <optional>
#include <string>

#include "core/op_observer.h"
#include "ops/op_kind.h"

namespace trainbench {
namespace {

struct CollectorState {
  std::vector<LayerCall> layers;
  int depth = 0;     // > 0 while inside a collected operator
  int backward = 0;  // > 0 while inside an autograd node: its products are gradients, not layers
};
thread_local CollectorState* t_state = nullptr;

const OpReader* reader_of(const char* name) { return find_op_reader(name); }

bool is_layer(const char* name) { return reader_of(name) != nullptr; }

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  CollectorState* s = t_state;
  if (s == nullptr) return nullptr;
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
    // The engine runs a CPU backward on the calling thread: a linear layer's backward dispatches
    // aten::mm for its input and weight gradients, which must not read as more linear layers.
    ++s->backward;
    return nullptr;
  }
  if (s->backward > 0) return nullptr;
  const OpReader* reader = reader_of(fn.name());
  if (reader == nullptr) return nullptr;
  if (s->depth++ > 0) return nullptr;
  // The TorchScript interpreter, running an unoptimised graph, records the module objects under an
  // operator's arguments as inputs too; no ATen operator takes an object, so they are dropped.
  c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
  while (!inputs.empty() && inputs.front().isObject()) inputs = inputs.slice(1);
  std::optional<LayerCall> call;
  try {
    call = reader->describe(inputs);
  } catch (const std::exception&) {
    return nullptr;  // a shape no op descriptor takes stays in the step's unattributed time
  }
  if (!call) return nullptr;
  for (auto& l : s->layers) {
    if (l.op == call->op && l.input_grad == call->input_grad) {
      ++l.count;
      return nullptr;
    }
  }
  s->layers.push_back(*call);
  return nullptr;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  CollectorState* s = t_state;
  if (s == nullptr) return;
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
    --s->backward;
  } else if (s->backward == 0 && is_layer(fn.name())) {
    --s->depth;
  }
}

}  // namespace

std::vector<LayerCall> collect_layers(const std::function<void()>& fn) {
  CollectorState state;
  detail::run_observed(
      t_state, &state,
      at::RecordFunctionCallback(on_enter, on_exit)
          .needsInputs(true)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE, at::RecordScope::BACKWARD_FUNCTION}),
      fn);
  return state.layers;
}

}  // namespace trainbench
