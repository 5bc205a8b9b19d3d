#include "ops/layers.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <cstring>
#include <optional>
#include <string>

#include "core/op_observer.h"

namespace trainbench {
namespace {

struct CollectorState {
  std::vector<LayerCall> layers;
  int depth = 0;     // > 0 while inside a collected operator
  int backward = 0;  // > 0 while inside an autograd node: its products are gradients, not layers
};
thread_local CollectorState* t_state = nullptr;

bool is_layer(const char* name) {
  // models::linear dispatches aten::linear; torch::nn::Linear's forward is addmm (2-d input) or matmul +
  // add (more dims). A traced TorchScript module calls aten::_convolution directly (nested inside
  // aten::convolution otherwise, so never collected twice).
  static const char* const kOps[] = {"aten::convolution", "aten::_convolution", "aten::linear", "aten::addmm", "aten::matmul", "aten::mm",
                                     "aten::lstm",        "aten::batch_norm", "trainbench::attention"};
  for (const char* op : kOps) {
    if (std::strcmp(name, op) == 0) return true;
  }
  return false;
}

const at::Tensor* tensor_at(c10::ArrayRef<const c10::IValue> in, size_t i) {
  if (i >= in.size() || !in[i].isTensor() || !in[i].toTensor().defined()) return nullptr;
  return &in[i].toTensor();
}

int64_t at_or_first(const std::vector<int64_t>& v, size_t i) { return v.size() == 1 ? v[0] : v.at(i); }

// The op descriptor of one call, or nothing for a call outside what op descriptors express
// (1-d/3-d or transposed convolutions, packed sequences, batch norm over 2-d input).
std::optional<LayerCall> describe(const char* name, c10::ArrayRef<const c10::IValue> in) {
  const at::Tensor* x = tensor_at(in, 0);
  if (x == nullptr) return std::nullopt;
  LayerCall call;
  call.input_grad = x->requires_grad();
  if (std::strcmp(name, "aten::convolution") == 0 || std::strcmp(name, "aten::_convolution") == 0) {
    // convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
    // _convolution: the same nine, then backend flags
    const at::Tensor* w = tensor_at(in, 1);
    if (w == nullptr || x->dim() != 4 || in.size() < 9 || in[6].toBool()) return std::nullopt;
    const auto stride = in[3].toIntVector(), pad = in[4].toIntVector(), dil = in[5].toIntVector();
    const int64_t groups = in[8].toInt();
    call.op = make_op("conv", {{"mb", x->size(0)}, {"ic", x->size(1)}, {"ih", x->size(2)}, {"iw", x->size(3)},
                               {"oc", w->size(0)}, {"kh", w->size(2)}, {"kw", w->size(3)},
                               {"sh", at_or_first(stride, 0)}, {"sw", at_or_first(stride, 1)},
                               {"ph", at_or_first(pad, 0)}, {"pw", at_or_first(pad, 1)},
                               {"dh", at_or_first(dil, 0)}, {"dw", at_or_first(dil, 1)}, {"g", groups}});
    return call;
  }
  if (std::strcmp(name, "aten::linear") == 0) {  // linear(input, weight[n,k], bias)
    const at::Tensor* w = tensor_at(in, 1);
    if (w == nullptr || w->dim() != 2 || x->dim() < 1) return std::nullopt;
    const int64_t k = x->size(-1);
    call.op = make_op("linear", {{"m", k > 0 ? x->numel() / k : 0}, {"n", w->size(0)}, {"k", k}});
    return call;
  }
  if (std::strcmp(name, "aten::addmm") == 0) {  // addmm(bias, input[m,k], weight^T[k,n])
    const at::Tensor* a = tensor_at(in, 1);
    const at::Tensor* b = tensor_at(in, 2);
    if (a == nullptr || b == nullptr || a->dim() != 2 || b->dim() != 2) return std::nullopt;
    call.input_grad = a->requires_grad();
    call.op = make_op("linear", {{"m", a->size(0)}, {"n", b->size(1)}, {"k", a->size(1)}});
    return call;
  }
  if (std::strcmp(name, "aten::matmul") == 0 || std::strcmp(name, "aten::mm") == 0) {
    // A product with a 2-d right operand is a layer's weight (batched products are attention's).
    const at::Tensor* b = tensor_at(in, 1);
    if (b == nullptr || b->dim() != 2 || x->dim() < 1) return std::nullopt;
    const int64_t k = x->size(-1);
    call.op = make_op("linear", {{"m", k > 0 ? x->numel() / k : 0}, {"n", b->size(1)}, {"k", k}});
    return call;
  }
  if (std::strcmp(name, "aten::lstm") == 0) {
    // lstm(input, hx[], params[], has_biases, num_layers, dropout, train, bidirectional, batch_first)
    // The boxed hx arrives as a generic list of tensors.
    if (in.size() < 9 || !in[1].isList() || x->dim() != 3) return std::nullopt;
    const auto hx = in[1].toListRef();
    if (hx.empty() || !hx[0].isTensor()) return std::nullopt;
    const bool batch_first = in[8].toBool();
    const at::Tensor h0 = hx[0].toTensor();
    call.op = make_op("lstm", {{"mb", x->size(batch_first ? 0 : 1)}, {"t", x->size(batch_first ? 1 : 0)},
                               {"i", x->size(2)}, {"h", h0.size(2)}, {"l", in[4].toInt()},
                               {"d", in[7].toBool() ? 2 : 1}});
    return call;
  }
  if (std::strcmp(name, "aten::batch_norm") == 0) {
    if (x->dim() != 4) return std::nullopt;
    call.op = make_op("bn", {{"mb", x->size(0)}, {"ic", x->size(1)}, {"ih", x->size(2)}, {"iw", x->size(3)}});
    return call;
  }
  if (std::strcmp(name, "trainbench::attention") == 0) {  // (q, k, v), each [batch, heads, seq, dim]
    if (x->dim() != 4) return std::nullopt;
    call.op = make_op("attention", {{"mb", x->size(0)}, {"nh", x->size(1)}, {"s", x->size(2)}, {"hd", x->size(3)}});
    return call;
  }
  return std::nullopt;
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  CollectorState* s = t_state;
  if (s == nullptr) return nullptr;
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
    // The engine runs a CPU backward on the calling thread: a linear layer's backward dispatches
    // aten::mm for its input and weight gradients, which must not read as more linear layers.
    ++s->backward;
    return nullptr;
  }
  if (s->backward > 0 || !is_layer(fn.name())) return nullptr;
  if (s->depth++ > 0) return nullptr;
  std::optional<LayerCall> call;
  try {
    call = describe(fn.name(), fn.inputs());
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
  detail::run_observed(t_state, &state,
                       at::RecordFunctionCallback(on_enter, on_exit)
                           .needsInputs(true)
                           .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE,
                                   at::RecordScope::BACKWARD_FUNCTION}),
                       fn);
  return state.layers;
}

}  // namespace trainbench
