// The command line's shape: a flag several subcommands share is declared once (cli/flag_groups.cpp),
// so `--help` shows it with the same text in each; the limits that weigh one flag against another are
// checked per subcommand before anything runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

using namespace test;

// The line of `trainbench <subcommand> --help` that describes `flag` ("" when there is none). Each
// subcommand's help is asked for once: every start of the binary loads LibTorch.
std::string help_line(const std::string& subcommand, const std::string& flag, const fs::path& dir) {
  static std::map<std::string, std::string> help;
  if (!help.count(subcommand)) {
    const CmdResult r = run_trainbench(subcommand + " --help", dir);
    EXPECT_EQ(r.code, 0) << subcommand << ": " << r.err;
    help[subcommand] = r.out;
  }
  std::istringstream lines(help[subcommand]);
  for (std::string line; std::getline(lines, line);) {
    // The flag's own entry starts the line and its name ends there (--data, not --data-dtype).
    const auto at = line.find_first_not_of(' ');
    if (at != std::string::npos && line.compare(at, flag.size(), flag) == 0 && at + flag.size() < line.size() &&
        line[at + flag.size()] == ' ') {
      return line;
    }
  }
  return "";
}

TEST(CliFlags, ASharedFlagHasOneHelpTextInEverySubcommand) {
  const fs::path dir = temp_dir("cli_flags", "help");
  struct Shared {
    std::string flag;
    std::vector<std::string> subcommands;
  };
  for (const Shared& s :
       {Shared{"--precision", {"run", "maxbatch", "memory"}}, Shared{"--layout", {"run", "maxbatch", "memory"}},
        Shared{"--optimizer", {"run", "maxbatch", "memory"}}, Shared{"--set", {"run", "maxbatch", "memory"}},
        Shared{"--forward-only", {"run", "maxbatch", "memory"}},
        Shared{"--input", {"run", "maxbatch", "memory", "explain"}}, Shared{"--threads", {"op", "peak", "explain"}},
        Shared{"--data-transfer", {"run", "explain"}},
        Shared{"--max-noise", {"run", "maxbatch", "memory", "explain"}}}) {
    const std::string first = help_line(s.subcommands.front(), s.flag, dir);
    ASSERT_FALSE(first.empty()) << s.flag << " is not in " << s.subcommands.front() << " --help";
    for (const auto& sub : s.subcommands) EXPECT_EQ(help_line(sub, s.flag, dir), first) << s.flag << " in " << sub;
  }
}

// Each subcommand still weighs its limits before it runs: one line, exit 2, nothing measured.
TEST(CliFlags, EachSubcommandRefusesAMinimumAboveItsMaximum) {
  const fs::path dir = temp_dir("cli_flags", "limits");
  const std::string out = " -o " + (dir / "r.json").string();
  EXPECT_TRUE(refused(run_trainbench("maxbatch --model convnet --min-steps 9 --max-steps 3" + out, dir),
                      {"--min-steps 9 is above --max-steps 3"}));
  EXPECT_TRUE(refused(run_trainbench("maxbatch --model convnet --start 64 --max-batch 8" + out, dir),
                      {"--start 64 is above --max-batch 8"}));
  EXPECT_TRUE(refused(run_trainbench("memory --model convnet --min-time 5 --max-time 2" + out, dir),
                      {"--min-time 5 is above --max-time 2"}));
  EXPECT_TRUE(refused(run_trainbench("explain --model convnet --batch 2 --min-steps 9 --max-steps 3" + out, dir),
                      {"--min-steps 9 is above --max-steps 3"}));
  EXPECT_TRUE(refused(run_trainbench("op conv:mb1ic1ih8oc1kh3 --min-time 2 --max-time 1" + out, dir),
                      {"--min-time 2 is above --max-time 1"}));
  EXPECT_FALSE(fs::exists(dir / "r.json"));
}

// The CPU heap is one value (--allocator, with --system-allocator its other spelling) whose default
// depends on the question: run and explain measure speed on the tuned heap; memory and maxbatch say
// what fits, on glibc's heap as a PyTorch program has it (docs/memory.md, "The heap a prediction is
// for"). The results file's context names the heap the children ran with.
TEST(CliFlags, TheHeapIsOneValueWhoseDefaultFollowsTheQuestion) {
  const fs::path dir = temp_dir("cli_flags", "allocator");
  const std::string tiny = " --warmup 1 --min-steps 1 --max-steps 1 --min-time 0 --max-noise 100 --no-store -o ";
  const auto heap = [&](const std::string& args) {
    const fs::path out = dir / "r.json";
    fs::remove(out);
    const CmdResult r = run_trainbench(args + tiny + out.string(), dir);
    EXPECT_EQ(r.code, 0) << args << ": " << r.err;
    const std::string text = fs::exists(out) ? slurp(out) : "";
    for (const char* name : {"tuned", "system"}) {
      if (text.find(std::string("\"cpu_allocator\": \"") + name + "\"") != std::string::npos) return std::string(name);
    }
    return std::string("none");
  };
  const std::string run = "run --case convnet:channels=4,depth=1,image=8:b1:fp32:nchw:cpu";
  const std::string memory =
      "memory --model convnet --set channels=4 --set depth=1 --set image=8 --measure-batches 1,2 "
      "--fits 64M";
  EXPECT_EQ(heap(run), "tuned");
  EXPECT_EQ(heap(run + " --allocator system"), "system");
  EXPECT_EQ(heap(run + " --system-allocator"), "system");
  EXPECT_EQ(heap(memory), "system");
  EXPECT_EQ(heap(memory + " --allocator tuned"), "tuned");
  EXPECT_EQ(heap("maxbatch --model convnet --set channels=4 --set depth=1 --set image=8 --max-batch 2"), "system");
  EXPECT_TRUE(refused(run_trainbench(run + " --allocator jemalloc", dir), {"--allocator", "jemalloc"}));
  EXPECT_TRUE(refused(run_trainbench(memory + " --allocator tuned --system-allocator", dir),
                      {"--allocator excludes --system-allocator"}));
}

}  // namespace
}  // namespace trainbench
