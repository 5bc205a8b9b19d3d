#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runner/suite.h"

namespace trainbench {
namespace {

// One file per test process: ctest -j runs this binary's tests side by side, and a shared path let
// one test read the suite another had just written.
std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("trainbench_test_" + name + "_" + std::to_string(::getpid()) + ".toml");
  std::ofstream(path) << text;
  return path.string();
}

void expect_suite_error(const std::string& text, const std::string& fragment) {
  const std::string path = write_temp("bad", text);
  try {
    (void)load_suite(path);
    FAIL() << "no error for:\n" << text;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Suite, BuiltInQuickSuiteLoadsAndPlans) {
  const Suite s = load_suite("quick");
  EXPECT_EQ(s.name, "quick");
  EXPECT_FALSE(s.description.empty());
  ASSERT_FALSE(s.groups.empty());
  EXPECT_FALSE(make_plan(s.groups[0]).empty());
  // A new user's first table: the warm-up waits for the step time to settle (no fixed `warmup`), so
  // it does not end with advice about a --warmup that user never gave.
  EXPECT_EQ(s.settings.stopping.count("warmup"), 0u);
}

TEST(Suite, EveryBuiltInSuiteLoads) {
  const auto names = builtin_suites();
  EXPECT_FALSE(names.empty());
  for (const auto& n : names) EXPECT_NO_THROW(load_suite(n)) << n;
}

TEST(Suite, ReadsGroupsAndSettings) {
  const Suite s = load_suite(write_temp("good", R"(description = "d"
[settings]
max_time = 3.5
warmup = 1
[[group]]
model = ["resnet18", "alexnet"]
batch = [4, 8]
layout = "nhwc"
[[group]]
model = "mobilenet_v2"
batch = 2
)"));
  ASSERT_EQ(s.groups.size(), 2u);
  EXPECT_EQ(make_plan(s.groups[0]).size(), 4u);
  EXPECT_EQ(s.groups[0].layouts, std::vector<std::string>{"nhwc"});
  EXPECT_DOUBLE_EQ(s.settings.stopping.at("max_time"), 3.5);
  EXPECT_DOUBLE_EQ(s.settings.stopping.at("warmup"), 1.0);
  EXPECT_EQ(s.settings.stopping.count("min_time"), 0u);
}

TEST(Suite, MalformedSuitesFailWithFileAndLine) {
  expect_suite_error("[[group]]\nmodel = [\"resnet18\"]\nbatch = [8]\nbatchh = [16]\n", ":4: unknown key 'batchh'");
  expect_suite_error("[[group]]\nmodel = [\"resnet18\"]\nbatch = []\n", ":3: key 'batch' is an empty list");
  expect_suite_error("[[group]]\nmodel = [\"resnet18\"]\nbatch = [\"eight\"]\n",
                     ":3: key 'batch' has a value of the wrong type");
  expect_suite_error("[[group]]\nmodel = [\"resnet5\"]\nbatch = [8]\n", ":2: unknown model 'resnet5'");
  expect_suite_error("[[group]]\nmodel = [\"resnet18\"]\nbatch = [8]\nprecision = [\"fp64\"]\n",
                     "unknown precision 'fp64'");
  expect_suite_error("[settings]\nmax_tme = 3\n[[group]]\nmodel = \"resnet18\"\nbatch = 1\n",
                     ":2: unknown key 'max_tme'");
  expect_suite_error("[[group]]\nmodel = [\"resnet18\"\n", ":");  // TOML syntax error
  expect_suite_error("description = \"nothing\"\n", "no [[group]]");
}

// `batch = "auto"` searches the largest batch (from 1); a device override with sizes does not. Groups:
// GPT-2 sizes, GPT-2's search, Llama sizes, Llama's search.
TEST(Suite, LlmSuiteSearchesBatchesOnGpusOnly) {
  const Suite s = load_suite("llm");
  ASSERT_EQ(s.groups.size(), 4u);
  for (size_t g : {1u, 3u}) {
    SCOPED_TRACE(g);
    const Sweep& search = s.groups[g];
    EXPECT_TRUE(search.search_batch);
    EXPECT_EQ(search.batches, std::vector<int64_t>{1});
    EXPECT_TRUE(searches_batch(search, "cuda"));
    EXPECT_FALSE(searches_batch(search, "cpu"));
    EXPECT_FALSE(searches_batch(s.groups[g - 1], "cuda"));
    // On the CPU: shrunk at seq 256, with and without checkpointing, at a fixed batch.
    Sweep on_cpu = search;
    on_cpu.devices = {"cpu"};
    const auto plan = make_plan(on_cpu);
    ASSERT_EQ(plan.size(), 2u);
    for (const auto& c : plan) {
      EXPECT_EQ(c.params.at("layers"), g == 1 ? "4" : "2");
      EXPECT_EQ(c.params.at("seq"), "256");
      EXPECT_EQ(c.batch, g == 1 ? 4 : 2);
    }
  }
  // Llama 3.2 1B and 3B at seq 2048 (the workload's default), bf16 autocast and bf16-pure, elsewhere than
  // on a CPU: the group's own settings, without its [group.cpu] override.
  const Sweep& sizes = s.groups[2];
  ASSERT_EQ(sizes.params.size(), 2u);
  for (const auto& p : sizes.params) {
    EXPECT_EQ(p.count("seq"), 0u) << "seq 2048 is the default";
    EXPECT_TRUE(p.at("size") == "llama-3.2-1b" || p.at("size") == "llama-3.2-3b");
  }
  EXPECT_EQ(sizes.precisions, (std::vector<std::string>{"bf16", "bf16-pure"}));
  expect_suite_error("[[group]]\nmodel = \"gpt\"\nbatch = \"most\"\n",
                     ":3: key 'batch' is a size, a list of sizes or \"auto\"");
}

// data, data_dtype, data_transfer and loader_threads as group keys: a relative data path is the suite
// file's neighbour, loader_threads is a sweep axis, and each value is refused at its own line by the
// rule its flag uses.
TEST(Suite, DataKeysShapeTheGroupsCases) {
  const auto dir = std::filesystem::temp_directory_path() / "trainbench_suite_data";
  std::filesystem::create_directories(dir);
  {
    std::ofstream tokens(dir / "tokens.bin", std::ios::binary);
    for (uint16_t i = 0; i < 2048; ++i) {
      const uint16_t id = i % 50;
      tokens.write(reinterpret_cast<const char*>(&id), 2);
    }
  }
  const auto suite = dir / "s.toml";
  std::ofstream(suite) << "[[group]]\nmodel = \"bilstm\"\nbatch = 2\ndata = \"tokens.bin\"\nloader_threads = [1, 2]\n";
  const Suite s = load_suite(suite.string());
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].data, (dir / "tokens.bin").string());
  const auto plan = make_plan(s.groups[0]);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].loader_threads, 1);
  EXPECT_EQ(plan[1].loader_threads, 2);
  EXPECT_NE(plan[1].descriptor().find(":data=" + (dir / "tokens.bin").string() + ":loader=2:"), std::string::npos)
      << plan[1].descriptor();
  const std::string g = "[[group]]\nmodel = \"bilstm\"\nbatch = 2\n";
  const std::string data = "data = \"" + (dir / "tokens.bin").string() + "\"\n";
  expect_suite_error(g + data + "loader_threads = -1\n", ":5: loader_threads: -1");
  expect_suite_error(g + data + "data_dtype = \"int8\"\n", ":5: unknown data_dtype 'int8'");
  expect_suite_error(g + data + "data_transfer = \"uint8\"\n", "--data-transfer uint8 is for image folders");
  expect_suite_error(g + "loader_threads = 2\n", ":4: key 'loader_threads' needs a 'data' path");
  expect_suite_error(g + "data = \"/no/such/tokens.bin\"\n", "/no/such/tokens.bin");
  std::filesystem::remove_all(dir);
}

TEST(Suite, UnknownNameListsTheBuiltIns) {
  try {
    (void)load_suite("quik");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("quick"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainbench
