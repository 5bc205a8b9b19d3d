// The real-data commands end to end: make-data, run --data (the record's `data` object and the verdict
// line), trainbench data, and bad --data input refused with exit 2 before anything runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>

#include "cli_util.h"
#include "data/image_folder.h"
#include "results/results_file.h"

namespace trainbench {
namespace {

namespace fs = std::filesystem;
using namespace test;

const std::string kFast = " --warmup 1 --min-steps 2 --min-time 0 --max-time 3 --max-noise 100";

TEST(DataCli, MakeDataThenTrainOnItAndMeasureTheLoader) {
  const fs::path dir = temp_dir("datacli", "train");
  const fs::path photos = dir / "photos";
  CmdResult r = run_trainbench("make-data " + photos.string() + " --images 12 --classes 3", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const data::ImageFolder f = data::scan_image_folder(photos.string());
  EXPECT_EQ(f.classes, (std::vector<std::string>{"class000", "class001", "class002"}));
  EXPECT_EQ(f.files.size(), 12u);
  // Not mixed into an existing dataset.
  EXPECT_EQ(run_trainbench("make-data " + photos.string() + " --images 2", dir).code, 2);

  const fs::path out = dir / "r.json";
  r = run_trainbench("run --model mobilenet_v2 --batch 2 --device cpu --threads 1 --data " + photos.string() +
                         " --loader-threads 1" + kFast + " -o " + out.string(),
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const ResultsFile res = read_results(out.string());
  ASSERT_EQ(res.benchmarks.size(), 1u);
  const Record& b = res.benchmarks[0];
  ASSERT_EQ(b.status, Status::ok) << b.error;
  EXPECT_EQ(b.name, "mobilenet_v2:b2:fp32:nchw:t1:data=" + photos.string() + ":loader=1:cpu");
  ASSERT_TRUE(b.data.has_value());
  EXPECT_EQ(b.data->kind, "images");
  EXPECT_EQ(b.data->files, 12);
  EXPECT_EQ(b.data->loader_threads, 1);
  EXPECT_EQ(b.data->skipped_files, 0);
  // Each sample reads one whole JPEG: the loader's bytes per sample (its MB/s over its samples/s, both
  // at the same busy time) lie between the smallest and the largest of the 12 files on disk.
  ASSERT_GT(b.data->loader_samples_s, 0.0);
  uintmax_t smallest = UINTMAX_MAX, largest = 0;
  for (const auto& file : f.files) {
    smallest = std::min(smallest, fs::file_size(file));
    largest = std::max(largest, fs::file_size(file));
  }
  const double bytes_per_sample = b.data->loader_mb_s * 1e6 / b.data->loader_samples_s;
  EXPECT_GE(bytes_per_sample, static_cast<double>(smallest) * (1.0 - 1e-9));
  EXPECT_LE(bytes_per_sample, static_cast<double>(largest) * (1.0 + 1e-9));
  // The waits are inside the steps: the model's rate, batch / median(step - wait), is at least the
  // step's own, batch / median(step), the record's throughput.
  EXPECT_GE(b.data->model_samples_s, b.throughput * (1.0 - 1e-9));
  // The wait share is the mean wait over the mean step (docs/methodology.md), and 5% of it makes the
  // case input-bound.
  EXPECT_NEAR(b.data->wait_share, b.data->mean_wait_s / b.step_time_s.mean, 1e-9);
  EXPECT_EQ(b.data->verdict, b.data->wait_share >= 0.05 ? "input-bound" : "compute-bound");
  EXPECT_NE(r.out.find(b.data->verdict + ": the loader delivers"), std::string::npos) << r.out;

  r = run_trainbench("data --data " + photos.string() + " --batch 4 --loader-threads 1,2 --size 64 --epochs 2", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("images/s"), std::string::npos) << r.out;
  EXPECT_EQ(count_lines(r.out), 1 + 1 + 4 + 2) << r.out;  // title, header, 2 threads x 2 epochs, 2 notes
  fs::remove_all(dir);
}

TEST(DataCli, BadDataIsRefusedBeforeAnythingRuns) {
  const fs::path dir = temp_dir("datacli", "bad");
  fs::create_directories(dir / "empty");
  const std::string base = "run --model resnet18 --batch 1 --device cpu -o " + (dir / "r.json").string();
  CmdResult r = run_trainbench(base + " --data " + (dir / "missing").string(), dir);
  EXPECT_TRUE(refused(r, {(dir / "missing").string() + ": no such"}));
  r = run_trainbench(base + " --data " + (dir / "empty").string(), dir);
  EXPECT_TRUE(refused(r, {(dir / "empty").string()}));
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  r = run_trainbench("run --model resnet18 --batch 1 --device cpu --loader-threads 2", dir);
  EXPECT_TRUE(refused(r, {"--loader-threads needs --data"}));
  // `trainbench data` on the same folder: refused the same way, naming it and what it lacks.
  r = run_trainbench("data --data " + (dir / "empty").string(), dir);
  EXPECT_TRUE(refused(r, {(dir / "empty").string() + ": no class folders"}));
  fs::remove_all(dir);
}

// `trainbench data` on a token file: windows/s and tokens/s (= windows/s x seq) and MB/s (= windows/s x
// (seq + 1) ids x 2 bytes) per thread count and epoch; the image-only settings are refused for it, and
// the token-only ones for a folder.
TEST(DataCli, TheLoaderAloneOnATokenFile) {
  const fs::path dir = temp_dir("datacli", "tokens");
  const fs::path tokens = dir / "tokens.bin";
  {
    std::ofstream out(tokens, std::ios::binary);
    for (uint16_t i = 0; i < 4096; ++i) {
      const uint16_t id = (i * 7) % 1000;
      out.write(reinterpret_cast<const char*>(&id), 2);
    }
  }
  CmdResult r =
      run_trainbench("data --data " + tokens.string() + " --batch 4 --seq 16 --loader-threads 1,2 --epochs 2", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("windows/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4096 tokens of uint16"), std::string::npos) << r.out;
  EXPECT_EQ(count_lines(r.out), 1 + 1 + 4 + 2) << r.out;  // title, header, 2 threads x 2 epochs, 2 notes
  // The rows: threads, epoch, windows/s, tokens/s, MB/s, ...; figures printed to a few digits.
  std::istringstream lines(r.out);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    std::istringstream cells(line);
    int threads = 0, epoch = 0;
    double windows = 0, toks = 0, mb = 0;
    if (!(cells >> threads >> epoch >> windows >> toks >> mb)) continue;
    ++rows;
    EXPECT_GT(windows, 0.0) << line;
    EXPECT_NEAR(toks / windows, 16.0, 0.25) << line;  // each printed to 3 digits
    EXPECT_NEAR(mb / (windows * 17 * 2 / 1e6), 1.0, 0.02) << line;
  }
  EXPECT_EQ(rows, 4) << r.out;
  r = run_trainbench("data --data " + tokens.string() + " --size 64", dir);
  EXPECT_TRUE(refused(r, {"are for image folders"}));
  fs::create_directories(dir / "folder" / "a");
  r = run_trainbench("data --data " + (dir / "folder").string() + " --seq 8", dir);
  EXPECT_TRUE(refused(r, {"are for token files"}));
  // explain's loader flags need --data, as run's do.
  r = run_trainbench("explain --model resnet18 --batch 1 --device cpu --loader-threads 2", dir);
  EXPECT_TRUE(refused(r, {"need --data"}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainbench
