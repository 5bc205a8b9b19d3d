#include "core/flops.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <cstring>

#include "core/op_observer.h"

namespace trainbench {

double conv_flops(int64_t batch, int64_t in_channels, int64_t out_channels, int64_t groups,
                  const std::vector<int64_t>& kernel, const std::vector<int64_t>& output_spatial) {
  double f =
      2.0 * static_cast<double>(batch) * static_cast<double>(out_channels) * static_cast<double>(in_channels / groups);
  for (int64_t k : kernel) f *= static_cast<double>(k);
  for (int64_t o : output_spatial) f *= static_cast<double>(o);
  return f;
}

double matmul_flops(int64_t m, int64_t n, int64_t k, int64_t batch) {
  return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

namespace {

struct CounterState {
  StepFlops flops;
  int depth = 0;  // > 0 while inside a counted operator
};
thread_local CounterState* t_state = nullptr;

bool is_counted(const char* name) {
  // aten::_convolution: what a traced TorchScript module calls directly (torch.jit.trace records the
  // convolution below aten::convolution); inside aten::convolution it is nested and not counted again.
  static const char* const kOps[] = {"aten::convolution", "aten::_convolution", "aten::addmm",
                                     "aten::mm",          "aten::bmm",          "aten::baddbmm"};
  for (const char* op : kOps) {
    if (std::strcmp(name, op) == 0) return true;
  }
  return false;
}

std::vector<int64_t> sizes_of(const c10::IValue& v) {
  if (v.isTensor()) {
    const auto& t = v.toTensor();
    if (t.defined()) return t.sizes().vec();
  }
  return {};
}

bool needs_grad(const c10::IValue& v) { return v.isTensor() && v.toTensor().defined() && v.toTensor().requires_grad(); }

// A parameter, or a view of one (the W^T a linear layer multiplies by): its gradient is a weight gradient.
bool is_weight(const at::Tensor& t) {
  if (t.is_leaf()) return true;
  return t.is_view() && t._base().is_leaf();
}

// The two operands of a counted product: (input, weight) of a convolution, (a, b) of a matrix product.
std::pair<size_t, size_t> operands_of(const char* name) {
  if (std::strcmp(name, "aten::addmm") == 0 || std::strcmp(name, "aten::baddbmm") == 0) return {1, 2};
  return {0, 1};
}

double flops_of(const char* name, c10::ArrayRef<const c10::IValue> in) {
  if (std::strcmp(name, "aten::convolution") == 0 || std::strcmp(name, "aten::_convolution") == 0) {
    // convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
    // _convolution takes the same nine first, then backend flags.
    if (in.size() < 9) return 0.0;
    auto x = sizes_of(in[0]);
    auto w = sizes_of(in[1]);
    if (x.size() < 3 || w.size() != x.size()) return 0.0;
    const auto stride = in[3].toIntVector();
    const auto padding = in[4].toIntVector();
    const auto dilation = in[5].toIntVector();
    const bool transposed = in[6].toBool();
    const int64_t groups = in[8].toInt();
    const size_t dims = x.size() - 2;
    std::vector<int64_t> kernel(w.begin() + 2, w.end());
    std::vector<int64_t> spatial;
    auto at = [](const std::vector<int64_t>& v, size_t i) { return v.size() == 1 ? v[0] : v[i]; };
    for (size_t i = 0; i < dims; ++i) {
      const int64_t eff = at(dilation, i) * (kernel[i] - 1) + 1;
      // A transposed convolution does the work of the direct one on its output: count on the input grid.
      spatial.push_back(transposed ? x[2 + i] : (x[2 + i] + 2 * at(padding, i) - eff) / at(stride, i) + 1);
    }
    const int64_t in_ch = transposed ? w[0] : w[1] * groups;
    const int64_t out_ch = transposed ? w[1] * groups : w[0];
    return transposed ? conv_flops(x[0], out_ch, in_ch, groups, kernel, spatial)
                      : conv_flops(x[0], in_ch, out_ch, groups, kernel, spatial);
  }
  if (std::strcmp(name, "aten::addmm") == 0) {  // addmm(bias, a[m,k], b[k,n])
    auto a = sizes_of(in[1]);
    auto b = sizes_of(in[2]);
    return (a.size() == 2 && b.size() == 2) ? matmul_flops(a[0], b[1], a[1]) : 0.0;
  }
  if (std::strcmp(name, "aten::mm") == 0) {
    auto a = sizes_of(in[0]);
    auto b = sizes_of(in[1]);
    return (a.size() == 2 && b.size() == 2) ? matmul_flops(a[0], b[1], a[1]) : 0.0;
  }
  if (std::strcmp(name, "aten::bmm") == 0 || std::strcmp(name, "aten::baddbmm") == 0) {
    const size_t off = std::strcmp(name, "aten::baddbmm") == 0 ? 1 : 0;
    auto a = sizes_of(in[off]);
    auto b = sizes_of(in[off + 1]);
    return (a.size() == 3 && b.size() == 3) ? matmul_flops(a[1], b[2], a[2], a[0]) : 0.0;
  }
  return 0.0;
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  CounterState* s = t_state;
  if (s == nullptr) return nullptr;
  const char* name = fn.name();
  if (!is_counted(name)) return nullptr;
  if (s->depth++ != 0) return nullptr;
  const auto inputs = fn.inputs();
  const double f = flops_of(name, inputs);
  if (f <= 0.0) return nullptr;
  s->flops.forward += f;
  // No gradient is computed under no-grad or inference mode, whatever the tensors' flags say.
  if (!at::GradMode::is_enabled()) return nullptr;
  const auto [a, b] = operands_of(name);
  for (size_t i : {a, b}) {
    if (i >= inputs.size() || !needs_grad(inputs[i])) continue;
    (is_weight(inputs[i].toTensor()) ? s->flops.backward_weights : s->flops.backward_data) += f;
  }
  return nullptr;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  CounterState* s = t_state;
  if (s != nullptr && is_counted(fn.name())) --s->depth;
}

}  // namespace

StepFlops count_step_flops(const std::function<void()>& fn) {
  CounterState state;
  detail::run_observed(
      t_state, &state,
      at::RecordFunctionCallback(on_enter, on_exit).needsInputs(true).scopes({at::RecordScope::FUNCTION}), fn);
  return state.flops;
}

double count_flops(const std::function<void()>& fn) { return count_step_flops(fn).forward; }

}  // namespace trainbench
