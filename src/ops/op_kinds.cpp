// The op kind table (ops/op_kind.h): one section per kind, then the table itself.
#include "ops/op_kind.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/flops.h"

namespace trainbench {
namespace {

using Inputs = c10::ArrayRef<const c10::IValue>;

const at::Tensor* tensor_at(Inputs in, size_t i) {
  if (i >= in.size() || !in[i].isTensor() || !in[i].toTensor().defined()) return nullptr;
  return &in[i].toTensor();
}

int64_t at_or_first(const std::vector<int64_t>& v, size_t i) { return v.size() == 1 ? v[0] : v.at(i); }

// A call whose first input is the layer's input `x`: whether that needs a gradient.
LayerCall call_on(const at::Tensor& x, OpDescriptor op) {
  LayerCall call;
  call.op = std::move(op);
  call.input_grad = x.requires_grad();
  return call;
}

// ---- conv ----------------------------------------------------------------------------------------

std::optional<OpShapeProblem> conv_check(const OpDescriptor& d) {
  const int64_t g = d.get("g");
  if (d.get("ic") % g != 0 || d.get("oc") % g != 0)
    return OpShapeProblem{"g", fmt::format("groups must divide ic ({}) and oc ({})", d.get("ic"), d.get("oc"))};
  for (int dim = 0; dim < 2; ++dim) {
    if (d.conv_out(dim) < 1)
      return OpShapeProblem{"", fmt::format("the kernel does not fit the padded input ({} is {})",
                                            dim == 0 ? "output height" : "output width", d.conv_out(dim))};
  }
  return std::nullopt;
}

// The same multiply-adds in every phase: data gradient is a transposed conv, weight gradient a
// correlation of input and output gradient.
double conv_kind_flops(const OpDescriptor& d, OpPhase) {
  return conv_flops(d.get("mb"), d.get("ic"), d.get("oc"), d.get("g"), {d.get("kh"), d.get("kw")},
                    {d.conv_out(0), d.conv_out(1)});
}

std::string conv_label(const OpDescriptor& d) {
  const int64_t g = d.get("g");
  std::string what = "conv";
  if (g > 1 && g == d.get("ic")) {
    what = "depthwise conv";
  } else if (g > 1) {
    what = "grouped conv";
  } else if (d.get("kh") == 1 && d.get("kw") == 1) {
    what = "pointwise conv";
  }
  std::string s = fmt::format("{} {}x{}", what, d.get("kh"), d.get("kw"));
  if (d.get("sh") != 1 || d.get("sw") != 1)
    s += d.get("sh") == d.get("sw") ? fmt::format(" s{}", d.get("sh"))
                                    : fmt::format(" s{}x{}", d.get("sh"), d.get("sw"));
  if (g > 1) s += fmt::format(" g={}", g);
  return s;
}

OpInstance conv_build(const OpDescriptor& d, const OpBuildSettings& s) {
  const auto opts = s.options();
  auto x = s.format(torch::randn({d.get("mb"), d.get("ic"), d.get("ih"), d.get("iw")}, opts));
  auto w = s.format(torch::randn({d.get("oc"), d.get("ic") / d.get("g"), d.get("kh"), d.get("kw")}, opts) * 0.05);
  const std::vector<int64_t> stride = {d.get("sh"), d.get("sw")}, pad = {d.get("ph"), d.get("pw")},
                             dil = {d.get("dh"), d.get("dw")};
  const int64_t g = d.get("g");
  OpInstance op;
  op.data = {x};
  op.weights = {w};
  op.forward = [x, w, stride, pad, dil, g] { return torch::conv2d(x, w, {}, stride, pad, dil, g); };
  return op;
}

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
// _convolution: the same nine, then backend flags. 1-d, 3-d and transposed convolutions are not read.
std::optional<LayerCall> conv_read(Inputs in) {
  const at::Tensor* x = tensor_at(in, 0);
  const at::Tensor* w = tensor_at(in, 1);
  if (x == nullptr || w == nullptr || x->dim() != 4 || in.size() < 9 || in[6].toBool()) return std::nullopt;
  const auto stride = in[3].toIntVector(), pad = in[4].toIntVector(), dil = in[5].toIntVector();
  return call_on(*x, make_op("conv", {{"mb", x->size(0)},
                                      {"ic", x->size(1)},
                                      {"ih", x->size(2)},
                                      {"iw", x->size(3)},
                                      {"oc", w->size(0)},
                                      {"kh", w->size(2)},
                                      {"kw", w->size(3)},
                                      {"sh", at_or_first(stride, 0)},
                                      {"sw", at_or_first(stride, 1)},
                                      {"ph", at_or_first(pad, 0)},
                                      {"pw", at_or_first(pad, 1)},
                                      {"dh", at_or_first(dil, 0)},
                                      {"dw", at_or_first(dil, 1)},
                                      {"g", in[8].toInt()}}));
}

// ---- gemm and linear -----------------------------------------------------------------------------

double matmul_kind_flops(const OpDescriptor& d, OpPhase) { return matmul_flops(d.get("m"), d.get("n"), d.get("k")); }

std::string matmul_label(const OpDescriptor& d) {
  return fmt::format("{} {}x{}x{}", d.kind, d.get("m"), d.get("n"), d.get("k"));
}

OpInstance gemm_build(const OpDescriptor& d, const OpBuildSettings& s) {
  auto a = torch::randn({d.get("m"), d.get("k")}, s.options());
  auto b = torch::randn({d.get("k"), d.get("n")}, s.options());
  OpInstance op;
  op.data = {a};
  op.weights = {b};
  op.forward = [a, b] { return torch::mm(a, b); };
  return op;
}

OpInstance linear_build(const OpDescriptor& d, const OpBuildSettings& s) {
  auto x = torch::randn({d.get("m"), d.get("k")}, s.options());
  auto w = torch::randn({d.get("n"), d.get("k")}, s.options()) * 0.05;
  auto b = torch::zeros({d.get("n")}, s.options());
  OpInstance op;
  op.data = {x};
  op.weights = {w, b};
  op.forward = [x, w, b] { return torch::nn::functional::linear(x, w, b); };
  return op;
}

// An input [..., k] times a 2-d right operand [k, n] (or a weight [n, k]): m is every row before k.
LayerCall linear_call(const at::Tensor& x, int64_t n) {
  const int64_t k = x.size(-1);
  return call_on(x, make_op("linear", {{"m", k > 0 ? x.numel() / k : 0}, {"n", n}, {"k", k}}));
}

// models::linear dispatches aten::linear: linear(input, weight[n,k], bias).
std::optional<LayerCall> linear_read(Inputs in) {
  const at::Tensor* x = tensor_at(in, 0);
  const at::Tensor* w = tensor_at(in, 1);
  if (x == nullptr || w == nullptr || w->dim() != 2 || x->dim() < 1) return std::nullopt;
  return linear_call(*x, w->size(0));
}

// torch::nn::Linear on 2-d input: addmm(bias, input[m,k], weight^T[k,n]).
std::optional<LayerCall> addmm_read(Inputs in) {
  const at::Tensor* a = tensor_at(in, 1);
  const at::Tensor* b = tensor_at(in, 2);
  if (tensor_at(in, 0) == nullptr || a == nullptr || b == nullptr || a->dim() != 2 || b->dim() != 2)
    return std::nullopt;
  return call_on(*a, make_op("linear", {{"m", a->size(0)}, {"n", b->size(1)}, {"k", a->size(1)}}));
}

// torch::nn::Linear on more dims (matmul + add), and mm: a product with a 2-d right operand is a
// layer's weight (batched products are attention's).
std::optional<LayerCall> matmul_read(Inputs in) {
  const at::Tensor* x = tensor_at(in, 0);
  const at::Tensor* b = tensor_at(in, 1);
  if (x == nullptr || b == nullptr || b->dim() != 2 || x->dim() < 1) return std::nullopt;
  return linear_call(*x, b->size(1));
}

// ---- lstm ----------------------------------------------------------------------------------------

std::optional<OpShapeProblem> lstm_check(const OpDescriptor& d) {
  if (d.get("d") > 2) return OpShapeProblem{"d", "must be 1 or 2 (directions)"};
  return std::nullopt;
}

// Per layer and direction: the input and recurrent products of the four gates, every time step.
// Backward does both products once more for each of data and weights.
double lstm_flops(const OpDescriptor& d, OpPhase) {
  double f = 0.0;
  for (int64_t l = 0; l < d.get("l"); ++l) {
    const int64_t in = l == 0 ? d.get("i") : d.get("h") * d.get("d");
    f += static_cast<double>(d.get("d")) * matmul_flops(d.get("mb") * d.get("t"), 4 * d.get("h"), in + d.get("h"));
  }
  return f;
}

std::string lstm_label(const OpDescriptor& d) {
  return fmt::format("{}lstm {}x{} l{}", d.get("d") == 2 ? "bi" : "", d.get("i"), d.get("h"), d.get("l"));
}

OpInstance lstm_build(const OpDescriptor& d, const OpBuildSettings& s) {
  auto lstm = std::make_shared<torch::nn::LSTMImpl>(torch::nn::LSTMOptions(d.get("i"), d.get("h"))
                                                        .num_layers(d.get("l"))
                                                        .bidirectional(d.get("d") == 2)
                                                        .batch_first(true));
  lstm->to(s.device, s.dtype);
  auto x = torch::randn({d.get("mb"), d.get("t"), d.get("i")}, s.options());
  OpInstance op;
  op.module = lstm;
  op.data = {x};
  op.weights = lstm->parameters();
  op.forward = [lstm, x] { return std::get<0>(lstm->forward(x)); };
  return op;
}

// lstm(input, hx[], params[], has_biases, num_layers, dropout, train, bidirectional, batch_first);
// the boxed hx arrives as a generic list of tensors. Packed sequences are not read.
std::optional<LayerCall> lstm_read(Inputs in) {
  const at::Tensor* x = tensor_at(in, 0);
  if (x == nullptr || in.size() < 9 || !in[1].isList() || x->dim() != 3) return std::nullopt;
  const auto hx = in[1].toListRef();
  if (hx.empty() || !hx[0].isTensor()) return std::nullopt;
  const bool batch_first = in[8].toBool();
  const at::Tensor h0 = hx[0].toTensor();
  return call_on(*x, make_op("lstm", {{"mb", x->size(batch_first ? 0 : 1)},
                                      {"t", x->size(batch_first ? 1 : 0)},
                                      {"i", x->size(2)},
                                      {"h", h0.size(2)},
                                      {"l", in[4].toInt()},
                                      {"d", in[7].toBool() ? 2 : 1}}));
}

// ---- attention -----------------------------------------------------------------------------------

// Q·K^T and P·V; backward to Q, K and V is four products of the same size; no weights.
double attention_flops(const OpDescriptor& d, OpPhase phase) {
  const double one = matmul_flops(d.get("s"), d.get("s"), d.get("hd"), d.get("mb") * d.get("nh"));
  if (phase == OpPhase::fwd) return 2.0 * one;
  return phase == OpPhase::bwd_data ? 4.0 * one : 0.0;
}

std::string attention_label(const OpDescriptor& d) {
  return fmt::format("attention {}x{}x{}", d.get("nh"), d.get("s"), d.get("hd"));
}

OpInstance attention_build(const OpDescriptor& d, const OpBuildSettings& s) {
  const std::vector<int64_t> shape = {d.get("mb"), d.get("nh"), d.get("s"), d.get("hd")};
  auto q = torch::randn(shape, s.options()), k = torch::randn(shape, s.options()), v = torch::randn(shape, s.options());
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.get("hd")));
  OpInstance op;
  op.data = {q, k, v};
  op.forward = [q, k, v, scale] {
    return torch::matmul(torch::softmax(torch::matmul(q, k.transpose(-2, -1)) * scale, -1), v);
  };
  return op;
}

// Models mark the attention core with a "trainbench::attention" record scope: (q, k, v), each
// [batch, heads, seq, dim].
std::optional<LayerCall> attention_read(Inputs in) {
  const at::Tensor* x = tensor_at(in, 0);
  if (x == nullptr || x->dim() != 4) return std::nullopt;
  return call_on(*x,
                 make_op("attention", {{"mb", x->size(0)}, {"nh", x->size(1)}, {"s", x->size(2)}, {"hd", x->size(3)}}));
}

// ---- bn ------------------------------------------------------------------------------------------

std::string bn_label(const OpDescriptor& d) { return fmt::format("batch norm {}", d.get("ic")); }

OpInstance bn_build(const OpDescriptor& d, const OpBuildSettings& s) {
  auto bn = std::make_shared<torch::nn::BatchNorm2dImpl>(d.get("ic"));
  bn->to(s.device, s.dtype);
  bn->train();
  auto x = s.format(torch::randn({d.get("mb"), d.get("ic"), d.get("ih"), d.get("iw")}, s.options()));
  OpInstance op;
  op.module = bn;
  op.data = {x};
  op.weights = {bn->weight, bn->bias};
  op.forward = [bn, x] { return bn->forward(x); };
  return op;
}

// Batch norm over 2-d input (BatchNorm1d) is not read.
std::optional<LayerCall> bn_read(Inputs in) {
  const at::Tensor* x = tensor_at(in, 0);
  if (x == nullptr || x->dim() != 4) return std::nullopt;
  return call_on(*x, make_op("bn", {{"mb", x->size(0)}, {"ic", x->size(1)}, {"ih", x->size(2)}, {"iw", x->size(3)}}));
}

}  // namespace

const std::vector<OpKind>& op_kind_table() {
  // name, family, fields, has_weights, layout_matters, check, flops, label, build, readers
  static const std::vector<OpKind> k = {
      {"conv",
       "conv",
       {{"mb", "batch", nullptr, 0, true, 1},
        {"ic", "input channels", nullptr, 0, true, 1},
        {"ih", "input height", nullptr, 0, true, 1},
        {"iw", "input width (default: ih)", "ih", 0, false, 1},
        {"oc", "output channels", nullptr, 0, true, 1},
        {"kh", "kernel height", nullptr, 0, true, 1},
        {"kw", "kernel width (default: kh)", "kh", 0, false, 1},
        {"sh", "stride, height (default 1)", nullptr, 1, false, 1},
        {"sw", "stride, width (default: sh)", "sh", 0, false, 1},
        {"ph", "padding, height (default 0)", nullptr, 0, false, 0},
        {"pw", "padding, width (default: ph)", "ph", 0, false, 0},
        {"dh", "dilation, height (default 1)", nullptr, 1, false, 1},
        {"dw", "dilation, width (default: dh)", "dh", 0, false, 1},
        {"g", "groups (default 1; g = ic = oc is depthwise)", nullptr, 1, false, 1}},
       true,
       true,
       conv_check,
       conv_kind_flops,
       conv_label,
       conv_build,
       // A traced TorchScript module calls aten::_convolution directly (nested inside
       // aten::convolution otherwise, so never collected twice).
       {{"aten::convolution", conv_read}, {"aten::_convolution", conv_read}}},
      {"gemm",
       "matmul",
       {{"m", "rows of A and C", nullptr, 0, true, 1},
        {"n", "columns of B and C", nullptr, 0, true, 1},
        {"k", "columns of A, rows of B", nullptr, 0, true, 1}},
       true,
       false,
       nullptr,
       matmul_kind_flops,
       matmul_label,
       gemm_build,
       {}},
      {"linear",
       "matmul",
       {{"m", "rows of the input (batch x tokens)", nullptr, 0, true, 1},
        {"n", "output features", nullptr, 0, true, 1},
        {"k", "input features", nullptr, 0, true, 1}},
       true,
       false,
       nullptr,
       matmul_kind_flops,
       matmul_label,
       linear_build,
       {{"aten::linear", linear_read},
        {"aten::addmm", addmm_read},
        {"aten::matmul", matmul_read},
        {"aten::mm", matmul_read}}},
      {"lstm",
       "lstm",
       {{"mb", "batch", nullptr, 0, true, 1},
        {"t", "sequence length (time steps)", nullptr, 0, true, 1},
        {"i", "input features", nullptr, 0, true, 1},
        {"h", "hidden size", nullptr, 0, true, 1},
        {"l", "layers (default 1)", nullptr, 1, false, 1},
        {"d", "directions: 1, or 2 for bidirectional (default 1)", nullptr, 1, false, 1}},
       true,
       false,
       lstm_check,
       lstm_flops,
       lstm_label,
       lstm_build,
       {{"aten::lstm", lstm_read}}},
      {"attention",
       "attention",
       {{"mb", "batch", nullptr, 0, true, 1},
        {"s", "sequence length", nullptr, 0, true, 1},
        {"nh", "heads", nullptr, 0, true, 1},
        {"hd", "dimension per head", nullptr, 0, true, 1}},
       false,
       false,
       nullptr,
       attention_flops,
       attention_label,
       attention_build,
       {{"trainbench::attention", attention_read}}},
      {"bn",
       "norm",
       {{"mb", "batch", nullptr, 0, true, 1},
        {"ic", "channels", nullptr, 0, true, 1},
        {"ih", "height", nullptr, 0, true, 1},
        {"iw", "width (default: ih)", "ih", 0, false, 1}},
       true,
       true,
       nullptr,
       nullptr,
       bn_label,
       bn_build,
       {{"aten::batch_norm", bn_read}}},
  };
  return k;
}

const OpReader* find_op_reader(const char* op_name) {
  for (const auto& kind : op_kind_table()) {
    for (const auto& r : kind.readers)
      if (std::strcmp(op_name, r.op_name) == 0) return &r;
  }
  return nullptr;
}

const OpKind* find_op_kind(const std::string& name) {
  for (const auto& k : op_kind_table())
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace trainbench
