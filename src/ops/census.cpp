#include "ops/census.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <cstring>
#include <set>
#include <unordered_map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/op_observer.h"
#include "memory/probe.h"
#include "ops/census_names.h"
#include "ops/op_kind.h"
#include "workloads/registry.h"

namespace trainbench {
namespace {

using predict::CensusOp;
using predict::OpClass;

// The floating-point elements, parameter elements and other bytes of a list of values.
struct CensusTally {
  double act = 0.0, weight = 0.0, other = 0.0;
  bool requires_grad = false;
  void add(const at::Tensor& t, std::set<const void*>& seen) {
    if (!t.defined() || t.numel() == 0) return;
    const void* key = t.unsafeGetTensorImpl();
    if (!seen.insert(key).second) return;
    if (at::isFloatingType(t.scalar_type())) {
      (t.is_leaf() && t.requires_grad() ? weight : act) += static_cast<double>(t.numel());
    } else {
      other += static_cast<double>(t.numel() * t.element_size());
    }
    requires_grad = requires_grad || t.requires_grad();
  }
  void add_all(c10::ArrayRef<const c10::IValue> values, std::set<const void*>& seen) {
    for (const auto& v : values) {
      if (v.isTensor()) {
        add(v.toTensor(), seen);
      } else if (v.isTensorList()) {
        for (const at::Tensor& t : v.toTensorVector()) add(t, seen);
      } else if (v.isList()) {
        for (const auto& x : v.toListRef())
          if (x.isTensor()) add(x.toTensor(), seen);
      }
    }
  }
};

struct CensusFrame {
  std::string name;
  CensusTally inputs;
  std::set<const void*> seen;
  bool launched = false;  // a kernel ran inside it (its own operators' kernels count, not it)
  int64_t k = 0;          // a product's inner dimension (is_product)
};

struct CensusState {
  std::vector<CensusOp> ops;
  // Under CUDA autocast, which tensors the step's forward made would be fp32 (true) or 16-bit (false),
  // by the rules of docs/prediction.md; a tensor not made by an observed operator (a parameter, the
  // input) is fp32.
  std::unordered_map<const void*, bool> wide;
  bool top_inputs_wide = false;     // the current top-level operator's float activations include an fp32 one
  double top_inputs16_elems = 0.0;  // its 16-bit float inputs' elements
  double top_first_elems = 0.0;     // its first float input's elements (attention: q, the output's shape)
  // The current top-level operator's product, from its shape: activation and weight elements, as a GPU
  // kernel reads and writes them (the CPU's own decomposition of a product is not the card's).
  bool shaped = false;
  double shape_act = 0.0, shape_weight = 0.0;
  int lstm_kernels = 0;
  std::vector<CensusFrame> frames;
  bool recording = true;
  bool described = false;  // the current top-level operator has its product's shape
};
thread_local CensusState* t_census = nullptr;

bool census_watched(const char* name) {
  return std::strncmp(name, "aten::", 6) == 0 || std::strcmp(name, "trainbench::attention") == 0;
}

// The product's output as rows x columns, `batch` of them, for a layer read by an op kind.
void set_gemm(CensusOp& o, const OpDescriptor& d) {
  if (d.kind == "conv") {
    o.gemm_m = static_cast<double>(d.get("mb") * d.conv_out(0) * d.conv_out(1));
    o.gemm_n = static_cast<double>(d.get("oc") / d.get("g"));
    o.gemm_batch = static_cast<double>(d.get("g"));
  } else if (d.kind == "linear" || d.kind == "gemm") {
    o.gemm_m = static_cast<double>(d.get("m"));
    o.gemm_n = static_cast<double>(d.get("n"));
  } else if (d.kind == "lstm") {
    o.gemm_m = static_cast<double>(d.get("mb"));
    o.gemm_n = static_cast<double>(4 * d.get("h"));
  } else if (d.kind == "attention") {
    o.gemm_m = o.gemm_n = static_cast<double>(d.get("s"));
    o.gemm_batch = static_cast<double>(d.get("mb") * d.get("nh"));
  }
}

// A product's elements from its shape: input, output and weight (a bias is the output's width).
bool shape_elems(const OpDescriptor& d, double* act, double* weight) {
  const auto g = [&](const char* f) { return static_cast<double>(d.get(f)); };
  if (d.kind == "conv") {
    *act = g("mb") * g("ic") * g("ih") * g("iw") + g("mb") * g("oc") * d.conv_out(0) * d.conv_out(1);
    *weight = g("oc") * (g("ic") / g("g")) * g("kh") * g("kw");
    return true;
  }
  if (d.kind == "linear" || d.kind == "gemm") {
    *act = g("m") * g("k") + g("m") * g("n");
    *weight = g("k") * g("n") + (d.kind == "linear" ? g("n") : 0.0);
    return true;
  }
  return false;
}

void describe(CensusOp& o, const LayerCall& call, CensusState& s) {
  const OpDescriptor& d = call.op;
  const std::string family = d.family();
  o.label = d.label();
  o.descriptor = d.str();
  if (family == "norm") {
    o.op_class = OpClass::memory;
    return;
  }
  o.op_class = family == "conv"        ? OpClass::conv
               : family == "lstm"      ? OpClass::lstm
               : family == "attention" ? OpClass::attention
                                       : OpClass::matmul;
  o.flops_fwd = d.flops(OpPhase::fwd);
  o.flops_bwd_data = call.input_grad || d.kind == "attention" ? d.flops(OpPhase::bwd_data) : 0.0;
  o.flops_bwd_weights = d.has_weights() ? d.flops(OpPhase::bwd_weights) : 0.0;
  set_gemm(o, d);
  s.shaped = shape_elems(d, &s.shape_act, &s.shape_weight);
  if (d.kind == "lstm") s.lstm_kernels = static_cast<int>(2 * d.get("l") * d.get("d"));
}

std::unique_ptr<at::ObserverContext> census_enter(const at::RecordFunction& fn) {
  CensusState* s = t_census;
  if (s == nullptr || !s->recording || !census_watched(fn.name())) return nullptr;
  CensusFrame f;
  f.name = fn.name();
  c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
  while (!inputs.empty() && inputs.front().isObject()) inputs = inputs.slice(1);
  f.inputs.add_all(inputs, f.seen);
  if (is_product(fn.name())) {
    // addmm(bias, a, b), baddbmm(bias, a, b); mm(a, b), bmm, matmul: a[..., m, k].
    const size_t a =
        std::strncmp(fn.name(), "aten::add", 9) == 0 || std::strncmp(fn.name(), "aten::badd", 10) == 0 ? 1 : 0;
    if (a < inputs.size() && inputs[a].isTensor() && inputs[a].toTensor().dim() >= 1)
      f.k = inputs[a].toTensor().size(-1);
  }
  if (s->frames.empty()) {
    s->top_inputs_wide = false;
    s->top_inputs16_elems = 0.0;
    s->top_first_elems = 0.0;
    bool activations = false, leaves = false;
    for (const auto& v : inputs) {
      if (!v.isTensor()) continue;
      const at::Tensor& t = v.toTensor();
      if (!t.defined() || !at::isFloatingType(t.scalar_type()) || t.numel() <= 1) continue;
      if (s->top_first_elems == 0.0) s->top_first_elems = static_cast<double>(t.numel());
      // Parameters, buffers and the input batch (leaves) do not set the type of an operator that also
      // reads activations (a batch norm's fp32 statistics leave a 16-bit input 16-bit); one that reads
      // only them (an embedding) has their type, fp32. An activation no observed operator made (the
      // attention core's output: a record scope shows no outputs) is a product's, 16-bit.
      if (t.is_leaf()) {
        leaves = true;
        continue;
      }
      activations = true;
      const auto it = s->wide.find(t.unsafeGetTensorImpl());
      const bool wide = it != s->wide.end() && it->second;
      s->top_inputs_wide = s->top_inputs_wide || wide;
      if (!wide) s->top_inputs16_elems += static_cast<double>(t.numel());
    }
    if (!activations && leaves) s->top_inputs_wide = true;
    CensusOp o;
    o.name = f.name;
    o.label = f.name.substr(f.name.find("::") + 2);
    o.kernels = 0;
    s->ops.push_back(o);
    s->described = false;
    s->shaped = false;
  }
  CensusOp& top = s->ops.back();
  // The first operator inside a top-level one that an op kind reads gives it its product's shape.
  if (!s->described) {
    if (const OpReader* reader = find_op_reader(fn.name())) {
      try {
        if (auto call = reader->describe(inputs)) {
          describe(top, *call, *s);
          s->described = true;
        }
      } catch (const std::exception&) {}
    }
  }
  s->frames.push_back(std::move(f));
  return nullptr;
}

// Inside the current top-level operator, `f` ended and `out` is what it wrote. An operator is a kernel
// when nothing inside it launched one (views and allocations launch none).
void count_kernel(CensusState& s, CensusOp& top, const CensusFrame& f, const CensusTally& out) {
  const bool kernel = !f.launched && !launches_nothing(f.name.c_str());
  if (kernel || f.launched) {
    if (!s.frames.empty()) s.frames.back().launched = true;
  }
  if (kernel) {
    // A kernel: it reads its inputs and writes its outputs once.
    ++top.kernels;
    top.act_elems += f.inputs.act + out.act;
    top.weight_elems += f.inputs.weight;
    top.other_bytes += f.inputs.other + out.other;
  }
  // Inside attention's written-out form (the model's own, or the one a CPU's scaled_dot_product_attention
  // falls back to): what a fused GPU kernel would not keep for backward. The outermost softmax or
  // dropout only (softmax dispatches _softmax inside it).
  if (!s.frames.empty() && s.frames.front().name == "trainbench::attention" &&
      (is_softmax(f.name) || is_dropout(f.name))) {
    bool nested = false;
    for (size_t i = 1; i < s.frames.size(); ++i)
      nested = nested || is_softmax(s.frames[i].name) || is_dropout(s.frames[i].name);
    if (!nested) top.math_saved_elems += (is_dropout(f.name) ? 2.0 : 1.0) * out.act;  // dropout: its output and mask
  }
}

// The top-level operator ends: its kernels and the bytes they move as a GPU runs it, where that is not
// the CPU's decomposition.
void as_gpu_runs(const CensusState& s, CensusOp& top, const CensusFrame& f, const CensusTally& out,
                 const at::RecordFunction& fn) {
  top.has_backward = out.requires_grad;
  if (top.name == "trainbench::attention") {
    top.math_elems = top.act_elems + top.weight_elems;
    top.math_kernels = top.kernels;
    // A fused kernel reads q, k and v and writes the output, q's shape (a record scope has no outputs).
    top.act_elems = f.inputs.act + s.top_first_elems;
    top.weight_elems = 0.0;
    top.kernels = 1;
  } else if (s.shaped) {
    // A convolution or a linear layer: one kernel (cuDNN's, cuBLAS's with the bias in its epilogue)
    // reading its input and weight and writing its output.
    top.act_elems = s.shape_act;
    top.weight_elems = s.shape_weight;
    top.other_bytes = 0.0;
    top.kernels = 1;
  } else if (top.op_class == OpClass::lstm) {
    // cuDNN's LSTM: per layer and direction the input's product for every step, then the recurrent kernel.
    top.kernels = s.lstm_kernels;
  } else if (top.name == "aten::dropout" || top.name == "aten::feature_dropout") {
    // One fused kernel on a GPU: reads the input, writes the output and a one-byte mask; backward reads
    // the gradient and the mask and writes the input's gradient.
    top.act_elems = 2.0 * out.act;
    top.other_bytes = out.act;
    top.bwd_elems = 2.0 * out.act;
    top.kernels = 1;
  } else if (top.name == "aten::cross_entropy_loss") {
    // log-softmax (reads the logits, writes their log-probabilities) and the loss reading them: two
    // kernels however LibTorch's CPU build decomposes it.
    top.act_elems = 3.0 * s.top_first_elems;
    top.kernels = 2;
  } else if (top.name == "aten::embedding") {
    // Reads the rows it gathers, not the table; its gradient is the whole table.
    const double table = f.inputs.weight;
    top.weight_elems = 0.0;
    top.act_elems = 2.0 * out.act;
    top.bwd_elems = out.act + table;
  } else if (!s.described && is_product(top.name.c_str()) && f.k > 0) {
    // A product no kind reads: out[..., m, n] from a[..., m, k].
    const auto& o = fn.outputs();
    if (!o.empty() && o[0].isTensor() && o[0].toTensor().dim() >= 2) {
      const at::Tensor y = o[0].toTensor();
      const double m = static_cast<double>(y.size(-2)), n = static_cast<double>(y.size(-1));
      const double batch = static_cast<double>(y.numel()) / std::max(1.0, m * n);
      top.op_class = OpClass::matmul;
      top.flops_fwd = 2.0 * m * n * static_cast<double>(f.k) * batch;
      top.flops_bwd_data = out.requires_grad ? top.flops_fwd : 0.0;
      top.flops_bwd_weights = out.requires_grad ? top.flops_fwd : 0.0;
      top.gemm_m = m;
      top.gemm_n = n;
      top.gemm_batch = batch;
    }
  }
  if (top.op_class == OpClass::memory && top.name != "aten::embedding" && top.name != "aten::dropout" &&
      top.name != "aten::feature_dropout")
    top.bwd_elems = top.has_backward ? 1.5 * top.act_elems : 0.0;
}

// Autocast's types: a product's output is 16-bit; an fp32-list operator's is fp32, with a cast copy
// of each 16-bit input; anything else is fp32 when one of its float inputs is.
void set_autocast_types(CensusState& s, CensusOp& top, const std::vector<c10::IValue>& outputs) {
  const bool product = top.op_class != OpClass::memory;
  const bool listed = autocast_fp32(top.name);
  top.out_wide = product ? false : listed ? true : s.top_inputs_wide;
  top.cast_elems = listed ? s.top_inputs16_elems : 0.0;
  top.out_elems = 0.0;
  for (const auto& v : outputs) {
    if (!v.isTensor()) continue;
    const at::Tensor& t = v.toTensor();
    if (!t.defined() || !at::isFloatingType(t.scalar_type())) continue;
    s.wide[t.unsafeGetTensorImpl()] = top.out_wide;
    if (top.kernels > 0 || product) top.out_elems += static_cast<double>(t.numel());
  }
  if (top.op_class == OpClass::attention) top.out_elems = s.top_first_elems;
}

void census_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  CensusState* s = t_census;
  if (s == nullptr || s->frames.empty() || s->frames.back().name != fn.name()) return;
  CensusFrame f = std::move(s->frames.back());
  s->frames.pop_back();
  CensusOp& top = s->ops.back();
  CensusTally out;
  std::set<const void*> out_seen;
  const std::vector<c10::IValue>& outputs = fn.outputs();
  out.add_all(c10::ArrayRef<const c10::IValue>(outputs.data(), outputs.size()), out_seen);
  count_kernel(*s, top, f, out);
  if (!s->frames.empty()) return;
  as_gpu_runs(*s, top, f, out, fn);
  set_autocast_types(*s, top, outputs);
  // A view or a query at the top: nothing moved, nothing launched.
  if (top.kernels == 0 && top.op_class == OpClass::memory) s->ops.pop_back();
}

struct CensusStep {
  std::vector<CensusOp> ops;
  double tensor_peak = 0.0;
  double forward_live = 0.0;
};

CensusStep observe_step(WorkloadOptions o, int64_t batch, std::unique_ptr<Workload>* keep) {
  o.batch = batch;
  memory::MemoryProbe probe(o.device);
  auto w = make_workload(o);
  CensusState state;
  double forward_live = 0.0;
  w->set_phase_observer([&](StepPhase p) {
    if (p != StepPhase::after_forward) return;
    state.recording = false;
    forward_live = static_cast<double>(probe.current_bytes());
  });
  w->next_batch();
  probe.reset_peak();
  detail::run_observed(t_census, &state,
                       at::RecordFunctionCallback(census_enter, census_exit)
                           .needsInputs(true)
                           .needsOutputs(true)
                           .scopes({at::RecordScope::FUNCTION}),
                       [&] { w->step(); });
  w->set_phase_observer({});
  CensusStep r;
  r.ops = std::move(state.ops);
  r.tensor_peak = static_cast<double>(probe.peak_bytes());
  r.forward_live = forward_live;
  if (keep != nullptr) *keep = std::move(w);
  return r;
}

}  // namespace

predict::StepCensus take_census(const WorkloadOptions& options, int64_t batch1, int64_t batch2) {
  WorkloadOptions o = options;
  o.precision = Precision{};
  o.device = DeviceSpec{};
  o.forward_only = false;
  o.data = "synthetic";
  predict::StepCensus c;
  c.model = o.model;
  c.params = o.params;
  c.optimizer = o.optimizer;
  c.layout = to_string(o.layout);
  c.libtorch_version = TORCH_VERSION;
  c.batch1 = batch1;
  c.batch2 = batch2;
  std::unique_ptr<Workload> w;
  CensusStep a = observe_step(o, batch1, nullptr);
  CensusStep b = observe_step(o, batch2, &w);
  if (a.ops.size() != b.ops.size())
    throw std::runtime_error(fmt::format("{}: the step dispatches {} operators at batch {} and {} at batch {}", o.model,
                                         a.ops.size(), batch1, b.ops.size(), batch2));
  for (size_t i = 0; i < a.ops.size(); ++i) {
    if (a.ops[i].name != b.ops[i].name)
      throw std::runtime_error(fmt::format("{}: operator {} is {} at batch {} and {} at batch {}", o.model, i,
                                           a.ops[i].name, batch1, b.ops[i].name, batch2));
  }
  c.ops1 = std::move(a.ops);
  c.ops2 = std::move(b.ops);
  c.tensor_peak1 = a.tensor_peak;
  c.tensor_peak2 = b.tensor_peak;
  c.forward_live1 = a.forward_live;
  c.forward_live2 = b.forward_live;
  c.unit = w->unit();
  c.tokens_per_sample = w->tokens_per_step() / batch2;
  c.parameters = w->parameters();
  c.parameter_tensors = static_cast<int64_t>(w->trainable_parameters().size());
  c.model_flops_per_sample = w->flops_per_step() / static_cast<double>(batch2);
  return c;
}

}  // namespace trainbench
