// bf16 on a CPU whatever its instruction set (core/cpu_bf16.h): the report that an autocast LSTM cannot
// run is checked against the CPU's flags as /proc/cpuinfo lists them and oneDNN's documented ISA levels,
// and a user's run on a CPU that lacks them (ONEDNN_MAX_CPU_ISA=AVX2 makes oneDNN act as such a CPU on
// any x86 machine) gives that one line in the row while the sweep goes on.
#include <gtest/gtest.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cli_util.h"
#include "core/cpu_bf16.h"
#include "results/results_file.h"

namespace trainbench {
namespace {

namespace fs = std::filesystem;
using test::CmdResult;
using test::run_trainbench;
using test::temp_dir;

// The CPU's flags, as the kernel lists them (an independent source: core/cpu_bf16.cpp asks CPUID).
std::set<std::string> cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

bool has_all(const std::set<std::string>& flags, std::initializer_list<const char*> names) {
  return std::all_of(names.begin(), names.end(), [&](const char* n) { return flags.count(n) > 0; });
}

// oneDNN's bf16 kernels start at avx512_core (AVX-512 F, BW, VL, DQ) or avx2_vnni_2 (AVX-VNNI,
// AVX-VNNI-INT8, AVX-NE-CONVERT); `held` is ONEDNN_MAX_CPU_ISA's value ("" for none), whose names below
// avx512_core are oneDNN's documented SSE41, AVX, AVX2, AVX2_VNNI and AVX2_VNNI_2.
bool onednn_bf16_expected(const std::set<std::string>& flags, std::string held) {
  std::transform(held.begin(), held.end(), held.begin(), ::toupper);
  const bool avx512_core = has_all(flags, {"avx512f", "avx512bw", "avx512vl", "avx512dq"});
  const bool avx2_vnni_2 = has_all(flags, {"avx2", "avx_vnni", "avx_vnni_int8", "avx_ne_convert"});
  if (held == "SSE41" || held == "AVX" || held == "AVX2" || held == "AVX2_VNNI") return false;
  if (held == "AVX2_VNNI_2") return avx2_vnni_2;
  return avx512_core || avx2_vnni_2;
}

// LibTorch 2.x hands an autocast LSTM to oneDNN whatever the CPU (its inputs stay fp32, so LibTorch's
// bf16 check is never asked); 1.13 only where the CPU has AVX-512 BW, VL and DQ, where oneDNN has bf16.
constexpr bool kLstmAlwaysGoesToOneDnn = TORCH_VERSION_MAJOR >= 2;

bool x86() {
#if defined(__x86_64__)
  return true;
#else
  return false;
#endif
}

TEST(CpuBf16, TheLstmRefusalFollowsTheCpuFlagsAndOneDnnsLimit) {
  if (!x86()) GTEST_SKIP() << "the rule is written for x86's instruction sets";
  const std::set<std::string> flags = cpuinfo_flags();
  ASSERT_FALSE(flags.empty()) << "/proc/cpuinfo lists no flags";
  const char* held = std::getenv("ONEDNN_MAX_CPU_ISA");
  const bool refused = kLstmAlwaysGoesToOneDnn && !onednn_bf16_expected(flags, held ? held : "");
  const std::string why = cpu_bf16_lstm_problem();
  EXPECT_EQ(!why.empty(), refused) << "flags: avx512bw " << flags.count("avx512bw") << ", ONEDNN_MAX_CPU_ISA "
                                   << (held ? held : "unset") << "; said: " << why;
  if (!refused) return;
  EXPECT_NE(why.find("bf16-pure"), std::string::npos) << why;
  if (held != nullptr && *held != '\0') {
    EXPECT_NE(why.find(std::string("ONEDNN_MAX_CPU_ISA=") + held), std::string::npos) << why;
  } else {
    EXPECT_NE(why.find("no AVX-512"), std::string::npos) << why;
  }
}

const std::string kFast = " --warmup 1 --min-steps 2 --min-time 0 --max-time 3 --max-noise 100 --threads 1";
const std::string kTinyLstm = " --set vocab=50 --set embed=8 --set hidden=8 --set seq=6";

// What a user on an AVX2-only CPU sees: `run --model bilstm --precision bf16,bf16-pure` gives the bf16
// row as an error with the reason and trains the bf16-pure one; a suite swept at bf16 goes on past it.
// LibTorch 2.x only: 1.13 decides from the CPU's own flags whether to hand bf16 to oneDNN, so holding
// oneDNN below the CPU acts as no real CPU does (every bf16 primitive fails, bf16-pure too), while on a
// real AVX2 CPU it never hands bf16 to oneDNN and StudyWorkloads.Bf16OnCpu* trains the LSTM there.
#if TORCH_VERSION_MAJOR >= 2
TEST(CpuBf16, AnAvx2CpuGivesTheBf16LstmRowItsReasonAndTheSweepGoesOn) {
  if (!x86()) GTEST_SKIP() << "ONEDNN_MAX_CPU_ISA=AVX2 holds an x86 CPU";
  const fs::path dir = temp_dir("cpubf16", "avx2");
  const fs::path out = dir / "r.json";
  const test::RunWith avx2{"ONEDNN_MAX_CPU_ISA=AVX2", 300};
  CmdResult r = run_trainbench(
      "run --model bilstm --batch 2 --precision bf16,bf16-pure" + kTinyLstm + kFast + " -o " + out.string(), dir, avx2);
  EXPECT_EQ(r.code, 1) << r.err;
  ResultsFile f = read_results(out.string());
  ASSERT_EQ(f.benchmarks.size(), 2u);
  const Record& bf16 = f.benchmarks[0];
  EXPECT_EQ(bf16.precision, "bf16");
  EXPECT_EQ(bf16.status, Status::error);
  EXPECT_NE(bf16.error.find("needs AVX-512"), std::string::npos) << bf16.error;
  EXPECT_NE(bf16.error.find("ONEDNN_MAX_CPU_ISA=AVX2"), std::string::npos) << bf16.error;
  EXPECT_NE(bf16.error.find("bf16-pure"), std::string::npos) << bf16.error;
  EXPECT_NE(r.out.find("bf16 autocast cannot train an LSTM"), std::string::npos) << "the table shows it:\n" << r.out;
  EXPECT_EQ(f.benchmarks[1].precision, "bf16-pure");
  EXPECT_EQ(f.benchmarks[1].status, Status::ok) << f.benchmarks[1].error;

  // A suite's sweep at bf16: the LSTM first, then a model whose bf16 runs everywhere.
  const fs::path suite = dir / "two.toml";
  std::ofstream(suite) << "[[group]]\nmodel = \"bilstm\"\nbatch = 2\n"
                          "set = { vocab = 50, embed = 8, hidden = 8, seq = 6 }\n"
                          "[[group]]\nmodel = \"convnet\"\nbatch = 2\n"
                          "set = { channels = 4, depth = 2, image = 8 }\n";
  const fs::path swept = dir / "swept.json";
  r = run_trainbench("run --suite " + suite.string() + " --precision bf16" + kFast + " -o " + swept.string(), dir,
                     avx2);
  EXPECT_EQ(r.code, 1) << r.err;
  f = read_results(swept.string());
  ASSERT_EQ(f.benchmarks.size(), 2u);
  EXPECT_EQ(f.benchmarks[0].status, Status::error) << f.benchmarks[0].error;
  EXPECT_EQ(f.benchmarks[1].status, Status::ok) << f.benchmarks[1].error;
  EXPECT_GT(f.benchmarks[1].throughput, 0.0);
}
#endif

}  // namespace
}  // namespace trainbench
