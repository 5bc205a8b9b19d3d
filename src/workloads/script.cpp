// The TorchScript workload (workloads/script.h): load the module, draw a synthetic batch of the given
// per-sample shape, train its parameters with the case's optimizer through LossWorkload's step.
#include "workloads/script.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <torch/version.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <mutex>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/failure.h"
#include "core/flops.h"
#include "core/subprocess.h"
#include "workloads/script_load.h"
#include "workloads/training.h"

namespace trainbench {
namespace {

std::string shape_str(at::IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

// `n` synthetic samples: N(0,1) floats, or token ids below the vocabulary (next-token: one more, the
// last target).
torch::Tensor draw_input(const ScriptSpec& s, int64_t n, const torch::Device& dev) {
  std::vector<int64_t> shape{n};
  shape.insert(shape.end(), s.input.shape.begin(), s.input.shape.end());
  if (!s.input.tokens) return torch::randn(shape, torch::TensorOptions(dev));
  if (s.target.kind == ScriptTarget::Kind::next_token) shape.back() += 1;
  return torch::randint(0, s.vocab, shape, torch::TensorOptions(torch::kLong).device(dev));
}

// Does `out` (the model's output for `n` samples) fit the target? "" when it does, else why not.
std::string output_misfit(const ScriptSpec& s, const torch::Tensor& out, int64_t n) {
  const std::string got = "output " + shape_str(out.sizes());
  switch (s.target.kind) {
    case ScriptTarget::Kind::classes:
      if (out.dim() != 2 || out.size(0) != n || out.size(1) != s.target.size) {
        return got + " does not fit target classes:" + std::to_string(s.target.size) + " (expected [" +
               std::to_string(n) + ", " + std::to_string(s.target.size) + "] for " + std::to_string(n) + " samples)";
      }
      break;
    case ScriptTarget::Kind::next_token: {
      const int64_t seq = s.input.shape[0];
      if (out.dim() != 3 || out.size(0) != n || out.size(1) != seq || out.size(2) != s.target.size) {
        return got + " does not fit target next-token:" + std::to_string(s.target.size) + " (expected [" +
               std::to_string(n) + ", " + std::to_string(seq) + ", " + std::to_string(s.target.size) + "] for " +
               std::to_string(n) + " sequences of " + std::to_string(seq) + " tokens)";
      }
      break;
    }
    case ScriptTarget::Kind::mse:
      if (out.dim() < 1 || out.size(0) != n) {
        return got + " does not fit target mse (expected the batch, " + std::to_string(n) + ", as its first dimension)";
      }
      break;
  }
  if (!out.is_floating_point())
    return got + " is " + std::string(c10::toString(out.scalar_type())) + ", not floating point";
  return "";
}

// A module whose parameters can train; throws std::invalid_argument with one line otherwise.
void check_parameters(const torch::jit::Module& m, const std::string& file) {
  int64_t trainable = 0, total = 0;
  for (const auto& p : m.parameters()) {
    total += p.numel();
    if (p.requires_grad()) trainable += p.numel();
  }
  if (total == 0) throw std::invalid_argument("TorchScript model '" + file + "' has no parameters: nothing to train");
  if (trainable == 0) {
    throw std::invalid_argument("TorchScript model '" + file + "': none of its " + std::to_string(total) +
                                " parameters requires a gradient: nothing to train");
  }
}

// The module's forward of `in`, its own failures as one line naming the file and the input (the
// model's message, not the interpreter's first line). An allocation failure goes on as it is: it is
// the case's out-of-memory, not a fault of the file.
c10::IValue checked_forward(torch::jit::Module& m, const ScriptSpec& s, const torch::Tensor& in) {
  try {
    return m.forward({in});
  } catch (const std::exception& e) {
    if (current_failure().out_of_memory) throw;
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    throw std::invalid_argument("TorchScript model '" + s.file + "' fails on input " + shape_str(in.sizes()) + " (" +
                                s.input.str() + "): " +
                                message_line(c10_error ? c10_error->what_without_backtrace() : e.what()));
  }
}

// `out`, the output for `n` samples, as the one tensor that fits the target; throws
// std::invalid_argument with one line otherwise.
torch::Tensor checked_output(const ScriptSpec& s, const c10::IValue& out, int64_t n) {
  if (!out.isTensor()) {
    throw std::invalid_argument("TorchScript model '" + s.file + "' returns a " + out.tagKind() +
                                ", not one tensor (trainbench trains modules whose forward returns a tensor)");
  }
  const std::string misfit = output_misfit(s, out.toTensor(), n);
  if (!misfit.empty()) throw std::invalid_argument("TorchScript model '" + s.file + "': " + misfit);
  return out.toTensor();
}

// The checks before anything runs: the file loads, has parameters that train, and its output for
// two samples fits the target. Throws std::invalid_argument with one line.
void check_model(const ScriptSpec& s) {
  torch::jit::Module m = load_module(s.file);
  check_parameters(m, s.file);
  constexpr int64_t n = 2;  // two samples: a batch norm in training mode needs more than one value per channel
  torch::NoGradGuard no_grad;
  m.train(true);
  const torch::Tensor x = draw_input(s, n, torch::kCPU);
  const torch::Tensor in = s.target.kind == ScriptTarget::Kind::next_token ? x.narrow(1, 0, s.input.shape[0]) : x;
  (void)checked_output(s, checked_forward(m, s, in), n);
}

std::mutex g_place_mu;
ScriptCheckPlace g_place;

ScriptCheckPlace check_place() {
  std::lock_guard<std::mutex> lock(g_place_mu);
  return g_place;
}

// The check in a child process (ScriptCheckPlace::child_process): "" when the model passes, or may
// still train (its two samples ran out of memory: each case then reports its own `oom`), else why not.
std::string check_in_child(const ScriptSpec& s, const Params& p, const ScriptCheckPlace& place) {
  std::vector<std::string> args = {place.executable, "script-check"};
  if (!place.memory_limit.empty()) args.insert(args.end(), {"--memory-limit", place.memory_limit});
  args.insert(args.end(), {"--", p.at("file"), p.at("input"), p.at("target"), p.at("vocab")});
  SpawnSpec spec;
  spec.args = args;
  const std::string model = "TorchScript model '" + s.file + "'";
  Captured c;
  try {
    c = run_captured(spec, place.timeout_s);  // no stop: a Ctrl-C reaches this process first
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("cannot check " + model + ": " + e.what());
  }
  if (c.timed_out) {
    return model + ": loading it and its forward of 2 samples did not end within " +
           (std::ostringstream() << place.timeout_s).str() + " s (--timeout)";
  }
  if (!c.result.empty()) {
    try {
      const auto j = nlohmann::json::parse(c.result);
      return j.at("out_of_memory").get<bool>() ? "" : j.at("refusal").get<std::string>();
    } catch (const std::exception& e) {
      return model + ": unreadable verdict from its check (" + first_line(e.what()) + ")";
    }
  }
  std::string how;
  if (WIFSIGNALED(c.status)) {
    const int sig = WTERMSIG(c.status);
    // Near an address-space limit some libraries do not survive a failed allocation: out of memory,
    // which each case measures and reports as its own (runner/child.h says the same of a case).
    if (!place.memory_limit.empty() && (sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT)) return "";
    how = "crashed trainbench's check (loading it and a forward of 2 samples) with " + signal_name(sig);
  } else {
    how = "its check (loading it and a forward of 2 samples) exited with code " +
          std::to_string(WEXITSTATUS(c.status));
  }
  const std::string said = last_nonempty_line(c.err);
  return model + " " + how + (said.empty() ? "" : ": " + said);
}

// One check per file (path, size, modification time), input, target and vocab in a process: a plan's
// product names the same model many times.
void check_model_once(const ScriptSpec& s, const Params& p) {
  const ScriptCheckPlace place = check_place();
  if (place.kind == ScriptCheckPlace::Kind::case_setup) return;  // the case checks as it builds the workload
  struct stat st {};
  const bool exists = stat(s.file.c_str(), &st) == 0;
  const std::string key = s.file + '\0' + std::to_string(exists ? st.st_size : -1) + '\0' +
                          std::to_string(exists ? st.st_mtime : 0) + '\0' + s.input.str() + '\0' + s.target.str() +
                          '\0' + std::to_string(s.vocab);
  static std::mutex mu;
  static std::map<std::string, std::string> verdicts;  // key -> "" (fine) or the error
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = verdicts.find(key); it != verdicts.end()) {
      if (!it->second.empty()) throw std::invalid_argument(it->second);
      return;
    }
  }
  std::string why;
  if (place.kind == ScriptCheckPlace::Kind::child_process) {
    // What the child cannot report (a missing file, a folder) is said here, without starting one.
    load_precheck(s.file);
    why = check_in_child(s, p, place);
  } else {
    try {
      check_model(s);
    } catch (const std::invalid_argument& e) {
      why = e.what();
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  verdicts[key] = why;
  if (!why.empty()) throw std::invalid_argument(why);
}

class ScriptWorkload final : public detail::LossWorkload {
 public:
  explicit ScriptWorkload(const WorkloadOptions& o, const ScriptSpec& s)
      : LossWorkload(o, s.input.tokens ? "sequences/s" : "images/s"), spec_(s) {
    const torch::Device dev = torch_device(o.device);
    module_ = load_module(s.file);
    check_parameters(module_, s.file);
    module_.to(dev);
    std::vector<torch::Tensor> trainable, state;
    for (const auto& p : module_.parameters()) {
      parameters_ += p.numel();
      (p.requires_grad() ? trainable : state).push_back(p);  // frozen parameters are state, as buffers are
    }
    for (const auto& b : module_.buffers()) state.push_back(b);
    if (o.layout == Layout::nhwc) {
      detail::to_channels_last(trainable);
      detail::to_channels_last(state);
    }
    seed_batch();
    const torch::Tensor x = draw_input(s, o.batch, dev);
    if (s.target.kind == ScriptTarget::Kind::next_token) {
      const int64_t seq = s.input.shape[0];
      input_ = x.narrow(1, 0, seq).contiguous();
      targets_ = x.narrow(1, 1, seq).reshape({-1});
    } else {
      input_ = (o.layout == Layout::nhwc && x.dim() == 4) ? x.contiguous(at::MemoryFormat::ChannelsLast) : x;
      if (s.target.kind == ScriptTarget::Kind::classes) {
        targets_ = torch::randint(0, s.target.size, {o.batch}, torch::TensorOptions(torch::kLong).device(dev));
      }
    }
    // FLOPs from the operators the interpreter dispatches for a forward of (up to) two samples, scaled
    // to the batch: the counted products are linear in it.
    module_.train(!o.forward_only);
    const int64_t n = std::min<int64_t>(2, o.batch);
    torch::Tensor sample_out;
    const StepFlops some = count_step_flops([&] {
      torch::AutoGradMode grad(true);
      sample_out = checked_output(spec_, checked_forward(module_, spec_, input_.narrow(0, 0, n)), n);
    });
    if (s.target.kind == ScriptTarget::Kind::mse) {
      // A fixed regression target of the output's shape for the whole batch.
      std::vector<int64_t> shape = sample_out.sizes().vec();
      shape[0] = o.batch;
      targets_ = torch::randn(shape, torch::TensorOptions(dev));
    }
    finish_setup(trainable, state, [this](bool on) { module_.train(on); },
                 some.scaled(static_cast<double>(o.batch) / static_cast<double>(n)), parameters_,
                 s.input.tokens ? s.input.shape[0] : 0, {&input_});
  }

 private:
  torch::Tensor forward_on(const torch::Tensor& x) { return module_.forward({x}).toTensor(); }
  // The profiling executor runs the forward graph getNumProfiledRuns() times to record shapes, then
  // optimises it on the next run; the backward graph, made by that optimisation, profiles and
  // optimises the same way one step later. Until then a step runs a different graph than the one
  // that trains (3x slower at first on a traced resnet18).
  long min_warmup_steps() const override {
    return 2 * (static_cast<long>(torch::jit::getNumProfiledRuns().load()) + 1);
  }
  torch::Tensor forward() override { return forward_on(input_); }
  torch::Tensor loss(const torch::Tensor& out) override {
    switch (spec_.target.kind) {
      case ScriptTarget::Kind::classes:
        return torch::nn::functional::cross_entropy(out, targets_);
      case ScriptTarget::Kind::next_token:
        return torch::nn::functional::cross_entropy(out.reshape({-1, out.size(-1)}), targets_);
      case ScriptTarget::Kind::mse:
        break;
    }
    // In fp32 as autocast takes losses (an autocast output may be bf16, the target is fp32).
    return torch::nn::functional::mse_loss(out.to(torch::kFloat), targets_);
  }

  ScriptSpec spec_;
  torch::jit::Module module_;
  torch::Tensor input_, targets_;
  int64_t parameters_ = 0;
};

}  // namespace

void set_script_check_place(const ScriptCheckPlace& place) {
  std::lock_guard<std::mutex> lock(g_place_mu);
  g_place = place;
}

std::string script_check_here(const Params& params, bool* out_of_memory) {
  *out_of_memory = false;
  const std::string file = params.count("file") ? params.at("file") : "";
  try {
    check_model(script_spec_of(params));
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (...) {
    const Failure f = current_failure();
    *out_of_memory = f.out_of_memory;
    return "TorchScript model '" + file + "': " + f.line;
  }
}

std::optional<FileDigest> script_file_digest(const std::string& model, const Params& params) {
  if (model != kScriptModel) return std::nullopt;
  const auto it = params.find("file");
  if (it == params.end() || it->second.empty()) return std::nullopt;
  struct stat st {};
  if (stat(it->second.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return std::nullopt;
  const std::string key = it->second + '\0' + std::to_string(st.st_size) + '\0' + std::to_string(st.st_mtime);
  static std::mutex mu;
  static std::map<std::string, FileDigest> digests;
  std::lock_guard<std::mutex> lock(mu);
  if (auto d = digests.find(key); d != digests.end()) return d->second;
  try {
    return digests[key] = digest_file(it->second);
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

bool looks_like_model_file(const std::string& text) {
  for (const char* ext : {".pt", ".pth", ".ts", ".zip"}) {
    const std::string e = ext;
    if (text.size() > e.size() && text.compare(text.size() - e.size(), e.size(), e) == 0) return true;
  }
  struct stat st {};
  return stat(text.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::unique_ptr<Workload> make_script_workload(const WorkloadOptions& o) {
  return std::make_unique<ScriptWorkload>(o, script_spec_of(o.params));
}

void check_script_model(const Params& all) { check_model_once(script_spec_of(all), all); }

}  // namespace trainbench
