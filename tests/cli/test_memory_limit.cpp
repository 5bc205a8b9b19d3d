// --memory-limit's reach: the command line's caps every case (a CPU case's address space, a GPU case's
// caching allocator); a suite's, or maxbatch's default, stands for a CPU's memory and leaves GPU cases
// alone. The setting travels to each case's child as arguments, so the round trip is what is checked.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <algorithm>

#include "cli/options.h"
#include "core/device.h"

namespace trainbench {
namespace {

using cli::MeasureFlags;

bool has(const std::vector<std::string>& args, const std::string& a) {
  return std::find(args.begin(), args.end(), a) != args.end();
}

// What a case's child makes of the arguments its parent hands it.
MeasureFlags child_side(const std::vector<std::string>& args) {
  CLI::App app;
  MeasureFlags child;
  child.add_to(app);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  app.parse(reversed);
  return child;
}

TEST(MemoryLimit, TheCommandLinesLimitCapsGpuCasesToo) {
  MeasureFlags parent;
  parent.memory_limit = "4G";
  const MeasureFlags child = child_side(parent.child_args());
  const ChildSettings s = child.resolve();
  EXPECT_EQ(s.memory_limit_bytes, int64_t{4} << 30);
  EXPECT_TRUE(s.memory_limit_on_gpu);
  EXPECT_FALSE(has(parent.child_args(), "--memory-limit-cpu-only"));
}

// The heap travels the same way, named whichever it is: memory's and maxbatch's default (glibc's) and
// run's (tuned) both reach a child whose own default is either.
TEST(MemoryLimit, TheHeapReachesTheChildWhateverItsDefault) {
  for (bool system : {false, true}) {
    MeasureFlags parent;
    parent.system_allocator = system;
    for (bool child_default : {false, true}) {
      CLI::App app;
      MeasureFlags child;
      child.system_allocator = child_default;
      child.add_to(app);
      std::vector<std::string> args = parent.child_args();
      std::reverse(args.begin(), args.end());  // CLI11 takes them last first
      app.parse(args);
      EXPECT_EQ(child.resolve().tune_allocator, !system) << "parent system " << system << ", child " << child_default;
    }
  }
}

TEST(MemoryLimit, ASuitesLimitStandsForACpusMemoryOnly) {
  MeasureFlags parent;
  parent.memory_limit = "6G";
  parent.memory_limit_cpu_only = true;
  const MeasureFlags child = child_side(parent.child_args());
  const ChildSettings s = child.resolve();
  EXPECT_EQ(s.memory_limit_bytes, int64_t{6} << 30);
  EXPECT_FALSE(s.memory_limit_on_gpu);
}

TEST(MemoryLimit, NoLimitTravelsAsNone) {
  MeasureFlags parent;
  parent.memory_limit_cpu_only = true;  // without a limit there is nothing to scope
  EXPECT_FALSE(has(parent.child_args(), "--memory-limit"));
  EXPECT_FALSE(has(parent.child_args(), "--memory-limit-cpu-only"));
  EXPECT_EQ(child_side(parent.child_args()).resolve().memory_limit_bytes, 0);
}

TEST(MemoryLimit, AGpuLimitIsRefusedWithOneLineWhereThereIsNoGpu) {
  EXPECT_EQ(limit_gpu_memory(parse_device("cpu"), int64_t{4} << 30), "") << "a CPU case has nothing to cap here";
  EXPECT_EQ(limit_gpu_memory(parse_device("cuda"), 0), "") << "no limit, nothing to do";
  if (torch::cuda::is_available()) GTEST_SKIP() << "a GPU is here: the cap is applied, not refused";
  const std::string why = limit_gpu_memory(parse_device("cuda"), int64_t{4} << 30);
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(why.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace trainbench
