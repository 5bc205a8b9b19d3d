#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>

#include "results/results_file.h"
#include "runner/maxbatch.h"

namespace trainbench {
namespace {

// A fake device on which batches up to `fits` train and larger ones run out of memory.
struct FakeDevice {
  int64_t fits;
  std::vector<int64_t> tried;
  Record operator()(const Case& c) {
    tried.push_back(c.batch);
    Record r;
    r.name = c.descriptor();
    r.batch_size = c.batch;
    r.status = c.batch <= fits ? Status::ok : Status::oom;
    r.throughput = static_cast<double>(c.batch);
    return r;
  }
};

Case base_case() {
  Case c;
  c.model = "resnet18";
  c.batch = 1;
  return c;
}

TEST(MaxBatch, DoublesThenBisectsToTheExactLimit) {
  for (int64_t limit : {1, 2, 3, 5, 37, 64, 100, 1000}) {
    FakeDevice dev{limit, {}};
    const MaxBatchResult m = find_max_batch(base_case(), 1, 1 << 20, std::ref(dev));
    EXPECT_EQ(m.largest, limit);
    EXPECT_EQ(m.best.batch_size, limit);
    EXPECT_EQ(m.best.status, Status::ok);
    EXPECT_TRUE(m.failure.empty());
    EXPECT_EQ(m.tries.size(), dev.tried.size());
    // logarithmic: doublings plus bisection steps
    EXPECT_LE(dev.tried.size(), 2u * 11u) << limit;
  }
}

TEST(MaxBatch, SequenceOfTriesForThirtySeven) {
  FakeDevice dev{37, {}};
  (void)find_max_batch(base_case(), 1, 1 << 20, std::ref(dev));
  EXPECT_EQ(dev.tried, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37}));
}

TEST(MaxBatch, NothingFitsGivesZero) {
  FakeDevice dev{0, {}};
  const MaxBatchResult m = find_max_batch(base_case(), 1, 1024, std::ref(dev));
  EXPECT_EQ(m.largest, 0);
  EXPECT_EQ(dev.tried, std::vector<int64_t>{1});
}

TEST(MaxBatch, StartAboveTheLimitBisectsDown) {
  FakeDevice dev{5, {}};
  const MaxBatchResult m = find_max_batch(base_case(), 16, 1024, std::ref(dev));
  EXPECT_EQ(m.largest, 5);
}

TEST(MaxBatch, StopsAtTheBatchCap) {
  FakeDevice dev{1000000, {}};
  const MaxBatchResult m = find_max_batch(base_case(), 1, 100, std::ref(dev));
  EXPECT_EQ(m.largest, 100);
  EXPECT_TRUE(m.hit_limit);
  EXPECT_EQ(dev.tried.back(), 100);
}

TEST(MaxBatch, AnErrorStopsTheSearch) {
  int calls = 0;
  const MaxBatchResult m = find_max_batch(base_case(), 1, 1024, [&](const Case& c) {
    ++calls;
    Record r;
    r.batch_size = c.batch;
    r.status = c.batch < 4 ? Status::ok : Status::error;
    r.error = "boom";
    return r;
  });
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(m.largest, 2);
  EXPECT_NE(m.failure.find("boom"), std::string::npos);
}

// The real thing: each try in its own child under a memory limit; b trains and b+1 (<= 2b) does not.
TEST(MaxBatch, UnderAMemoryLimitFindsABatchThatTrainsWhileTwiceItDoesNot) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("trainbench_maxbatch_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path out = dir / "mb.json";
  const std::string cmd = std::string(TRAINBENCH_EXE) +
                          " maxbatch --model mobilenet_v2 --device cpu --memory-limit 700M"
                          " --warmup 1 --min-steps 1 --min-time 0 --max-time 1 -o " + out.string() + " > " +
                          (dir / "out.txt").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
  const ResultsFile f = read_results(out.string());
  int64_t largest_ok = 0;
  for (const auto& r : f.benchmarks) {
    ASSERT_NE(r.status, Status::error) << r.name << ": " << r.error;
    if (r.status == Status::ok) largest_ok = std::max(largest_ok, r.batch_size);
  }
  ASSERT_GT(largest_ok, 0) << "nothing trained under the limit";
  bool next_one_ran_out = false;
  for (const auto& r : f.benchmarks) {
    if (r.status == Status::oom) {
      EXPECT_GT(r.batch_size, largest_ok) << "an OOM below a batch that trained";
    }
    if (r.status == Status::oom && r.batch_size == largest_ok + 1) next_one_ran_out = true;
  }
  EXPECT_TRUE(next_one_ran_out) << "b+1 (so also 2b) must have been tried and run out of memory";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainbench
