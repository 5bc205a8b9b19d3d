// What LibTorch's bf16 kernels can run on this CPU, asked of LibTorch and the CPU itself, never learnt
// from a failure. One fact so far: whether bf16 autocast can train an LSTM (docs/methodology.md,
// "bf16 on a CPU").
#pragma once
#include <string>

namespace trainbench {

// "" where LibTorch's CPU bf16 autocast trains an LSTM here; otherwise one line saying why not (the
// instruction set the CPU lacks, or ONEDNN_MAX_CPU_ISA where it is set) and that bf16-pure runs.
//
// Why: LibTorch 2.x hands an autocast LSTM to oneDNN's RNN with fp32 inputs (its own bf16 check is
// asked only of bf16 inputs), and oneDNN has bf16 kernels only from AVX-512 (avx512_core) or
// AVX2-VNNI-2 up: on an AVX2-only CPU the primitive cannot be created, and PyTorch itself raises the
// same. bf16-pure runs there, since with bf16 inputs LibTorch asks oneDNN first and takes its own
// kernels when the answer is no. LibTorch 1.13 hands bf16 to oneDNN only where the CPU itself reports
// AVX-512 BW, VL and DQ, so on a real CPU it always runs: "" there.
std::string cpu_bf16_lstm_problem();

}  // namespace trainbench
