#include "core/cpu_bf16.h"

#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/version.h>

#include <cstdlib>

namespace trainbench {
#if TORCH_VERSION_MAJOR >= 2
namespace {

// The CPU's own flags (CPUID), whatever oneDNN is held to.
struct CpuFlags {
  bool avx2 = false, avx512f = false;
};

CpuFlags cpu_flags() {
  CpuFlags f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.avx512f = __builtin_cpu_supports("avx512f");
#endif
  return f;
}

// oneDNN's own answer, as LibTorch 2.x registers it (Python's torch.ops.mkldnn._is_mkldnn_bf16_supported):
// bf16 kernels at the instruction set oneDNN may use, ONEDNN_MAX_CPU_ISA included. True where the
// question cannot be asked (no oneDNN: nothing is handed to it).
bool onednn_has_bf16() {
  const auto op = c10::Dispatcher::singleton().findSchema({"mkldnn::_is_mkldnn_bf16_supported", ""});
  return !op || op->typed<bool()>().call();
}

}  // namespace
#endif

std::string cpu_bf16_lstm_problem() {
#if TORCH_VERSION_MAJOR < 2
  return "";
#else
  if (!at::hasMKLDNN() || !at::globalContext().userEnabledMkldnn() || onednn_has_bf16()) return "";
  std::string cpu;
  if (const char* held = std::getenv("ONEDNN_MAX_CPU_ISA"); held != nullptr && *held != '\0') {
    cpu = std::string("oneDNN is held to ONEDNN_MAX_CPU_ISA=") + held;
  } else if (const CpuFlags f = cpu_flags(); !f.avx512f) {
    cpu = f.avx2 ? "this CPU has AVX2 and no AVX-512" : "this CPU has neither AVX2 nor AVX-512";
  } else {
    cpu = "oneDNN reports no bf16 kernels on this CPU";
  }
  return "bf16 autocast cannot train an LSTM on this CPU: LibTorch hands it to oneDNN, whose bf16 LSTM needs "
         "AVX-512 (avx512_core) or AVX2-VNNI-2, and " +
         cpu + "; --precision bf16-pure trains it in LibTorch's own kernels";
#endif
}

}  // namespace trainbench
