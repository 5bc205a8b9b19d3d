// The real-data commands end to end: make-data, run --data (the record's `data` object and the verdict
// line), trainbench data, and bad --data input refused with exit 2 before anything runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <vector>

#include "cli_util.h"
#include "data/image_folder.h"
#include "results/record.h"
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

// The pixel limit by flag, and why each skipped file was skipped. A 33-byte PNG whose header claims
// 60000x60000 among make-data's JPEGs: skipped under the default limit, naming its claimed size; with
// --max-image-pixels raised past it, its header passes and the truncated file fails in the decoder
// instead. `run --data` records the limit and the reason. The flag takes 1 to 10^12, by the one rule.
TEST(DataCli, ThePixelLimitFlagAndEachSkippedFilesReason) {
  const fs::path dir = temp_dir("datacli", "pixels");
  const fs::path photos = dir / "photos";
  ASSERT_EQ(run_trainbench("make-data " + photos.string() + " --images 6 --classes 2", dir).code, 0);
  const fs::path bomb = photos / "class000" / "bomb.png";
  {
    std::vector<uint8_t> b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    for (uint32_t v : {60000u, 60000u}) {
      for (int sh = 24; sh >= 0; sh -= 8) b.push_back(static_cast<uint8_t>(v >> sh));
    }
    for (uint8_t v : {8, 2, 0, 0, 0, 0, 0, 0, 0}) b.push_back(v);
    std::ofstream(bomb, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  }
  const std::string data = "data --data " + photos.string() + " --batch 7 --loader-threads 1 --epochs 1 --size 32";
  CmdResult r = run_trainbench(data, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 file(s) skipped, first " + bomb.string() +
                      " (its header claims 60000x60000 pixels, over the limit of 178956970); the pixel limit: "
                      "178956970 (--max-image-pixels)"),
            std::string::npos)
      << r.out;
  r = run_trainbench(data + " --max-image-pixels 4000000000", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 file(s) skipped, first " + bomb.string() + " ("), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("over the limit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the pixel limit: 4000000000"), std::string::npos) << r.out;
  for (const char* bad : {"0", "1000000000001", "1e6", "08"}) {
    EXPECT_TRUE(refused(run_trainbench(data + " --max-image-pixels " + bad, dir), {"--max-image-pixels"})) << bad;
    EXPECT_TRUE(refused(run_trainbench("run --model resnet18 --batch 1 --max-image-pixels " + std::string(bad), dir),
                        {"--max-image-pixels"}))
        << bad;
  }
  // run --data: the limit travels to the case's child, and the record keeps it and the reason.
  const fs::path out = dir / "r.json";
  r = run_trainbench("run --model mobilenet_v2 --batch 2 --device cpu --threads 1 --data " +
                         photos.string() + " --max-image-pixels 100000000" + kFast + " -o " + out.string(),
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const Record rec = read_results(out.string()).benchmarks.at(0);
  ASSERT_TRUE(rec.data.has_value());
  EXPECT_EQ(rec.data->max_image_pixels, 100000000);
  EXPECT_EQ(rec.data->first_skipped, bomb.string());
  EXPECT_EQ(rec.data->first_skipped_reason, "its header claims 60000x60000 pixels, over the limit of 100000000");
  fs::remove_all(dir);
}

// A file the loader may not read is skipped for that reason, not called undecodable. Root reads any
// file, so `data` runs as nobody (setpriv) over a world-readable copy with one file at mode 000.
TEST(DataCli, AnUnreadableFileIsSkippedAsPermissionDenied) {
  const fs::path dir = temp_dir("datacli", "denied");
  if (shell("setpriv --reuid=65534 --regid=65534 --clear-groups " TRAINBENCH_EXE " --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "trainbench cannot start as an unprivileged user here (its LibTorch is not readable to others)";
  }
  const fs::path photos = dir / "photos";
  ASSERT_EQ(run_trainbench("make-data " + photos.string() + " --images 4 --classes 1", dir).code, 0);
  const fs::path locked = photos / "class000" / "000_locked.jpg";
  fs::copy_file(photos / "class000" / fs::directory_iterator(photos / "class000")->path().filename(), locked);
  ASSERT_EQ(shell("chmod -R a+rX " + dir.string() + " && chmod 000 " + locked.string()), 0);
  const std::string err = (dir / "err.txt").string(), out = (dir / "out.txt").string();
  const int code = shell("cd / && setpriv --reuid=65534 --regid=65534 --clear-groups " TRAINBENCH_EXE " data --data " +
                         photos.string() + " --batch 5 --loader-threads 1 --epochs 1 --size 32 > " + out + " 2> " + err);
  ASSERT_EQ(code, 0) << slurp(err);
  EXPECT_NE(slurp(out).find("1 file(s) skipped, first " + locked.string() + " (Permission denied)"), std::string::npos)
      << slurp(out);
  fs::remove_all(dir);
}

// A token file truncated while `trainbench data` reads it: the process ended by SIGBUS (exit 135) and,
// with stdout block-buffered, the rows already measured were lost. Now the read is an error of one line
// naming the file, and each row printed before it stays printed. The truncation comes once the first
// row is out, while later epochs still read (2^24 tokens, 200 epochs of 2^18 windows).
TEST(DataCli, ATokenFileTruncatedWhileReadEndsWithOneLineAndKeepsItsRows) {
  const fs::path dir = temp_dir("datacli", "shrink");
  const fs::path tokens = dir / "tokens.bin";
  {
    std::vector<uint16_t> ids(1 << 24);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint16_t>(i % 1000);
    std::ofstream(tokens, std::ios::binary).write(reinterpret_cast<const char*>(ids.data()), 2 * ids.size());
  }
  const fs::path out = dir / "out.txt", err = dir / "err.txt", rc = dir / "rc.txt";
  const int shell_code = shell(
      "(timeout -k 5 120 " TRAINBENCH_EXE " data --data " + tokens.string() +
      " --batch 64 --seq 64 --loader-threads 1 --epochs 200 > " + out.string() + " 2> " + err.string() +
      "; echo $? > " + rc.string() + ") & i=0; while [ $i -lt 1200 ] && [ \"$(cat " + out.string() + " 2> /dev/null | wc -l)\" -lt 3 ]; do sleep 0.05; i=$((i+1)); done; truncate -s 4096 " + tokens.string() + "; wait");
  ASSERT_EQ(shell_code, 0);
  const std::string code = slurp(rc);
  const std::string said = slurp(err);
  EXPECT_EQ(code, "1\n") << said;  // not 135 (SIGBUS), nor 124 (a hang)
  EXPECT_EQ(count_lines(said), 1) << said;
  EXPECT_NE(said.find("trainbench: error: --data " + tokens.string() + ": the file shrank while it was read"),
            std::string::npos)
      << said;
  // The title, the header and at least the first epoch's row, each flushed as it was printed.
  const std::string printed = slurp(out);
  EXPECT_GE(count_lines(printed), 3) << printed;
  EXPECT_NE(printed.find("\nthreads  epoch"), std::string::npos) << printed;
  EXPECT_NE(printed.find("(16777216 tokens of uint16)"), std::string::npos) << printed;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainbench

namespace trainbench {
namespace {

// The loader's memory is the loader's. mobilenet_v2 at batch 2 on 224x224 float images: one batch is
// 2 x 3 x 224 x 224 x 4 bytes of pixels and 2 x 8 of labels. With 32 loader threads the prefetch queue
// holds 2 x 32 such batches, and 32 thread stacks (8 MiB each by default) come with them; none of it is
// the model's.
// So the model's figures (input batch, tensor peak, activations per sample, the address space grown)
// are those of 1 thread, the loader's own are recorded apart, and a --memory-limit that 1 thread fits
// in with 128 MiB to spare is no `oom` at 32 threads (the loader alone takes over 300 MB there).
TEST(DataCli, TheLoadersQueueAndThreadsAreNotTheModelsMemory) {
  const fs::path dir = temp_dir("datacli", "loadermem");
  const fs::path photos = dir / "photos";
  ASSERT_EQ(run_trainbench("make-data " + photos.string() + " --images 16 --classes 2", dir).code, 0);
  auto run_with = [&](int threads, const std::string& extra) {
    const fs::path out = dir / ("r" + std::to_string(threads) + "_" + std::to_string(extra.size()) + ".json");
    const CmdResult r = run_trainbench("run --model mobilenet_v2 --batch 2 --device cpu --threads 1 --data " +
                                           photos.string() + " --loader-threads " + std::to_string(threads) + extra +
                                           kFast + " -o " + out.string(),
                                       dir);
    EXPECT_EQ(r.code, 0) << r.err;
    return read_results(out.string()).benchmarks.at(0);
  };
  const Record one = run_with(1, "");
  const Record many = run_with(32, "");
  ASSERT_EQ(one.status, Status::ok) << one.error;
  ASSERT_EQ(many.status, Status::ok) << many.error;
  ASSERT_TRUE(one.memory && many.memory);
  const MemoryInfo &a = *one.memory, &b = *many.memory;
  const int64_t batch_bytes = 2 * 3 * 224 * 224 * 4 + 2 * 8;
  // The model holds one batch, whatever the loader's threads.
  EXPECT_EQ(a.inputs_bytes, batch_bytes);
  EXPECT_EQ(b.inputs_bytes, batch_bytes);
  EXPECT_NEAR(static_cast<double>(b.peak_bytes), static_cast<double>(a.peak_bytes), 0.01 * a.peak_bytes);
  EXPECT_NEAR(b.activations_bytes_per_sample, a.activations_bytes_per_sample, 0.01 * a.activations_bytes_per_sample);
  // The loader's: its queue of 2 batches per thread (and those in the making), and its address space.
  EXPECT_GE(a.loader_peak_bytes, 2 * batch_bytes);
  EXPECT_GE(b.loader_peak_bytes, 64 * batch_bytes);
  EXPECT_GE(b.loader_address_space_bytes, 64 * batch_bytes);  // and 32 thread stacks
  EXPECT_GT(b.loader_address_space_bytes, a.loader_address_space_bytes);
  // The address space the model grew: within one malloc heap (64 MiB of address space) and 32 MiB of each
  // other, where the loader's is 300 MB more. On LibTorch 2.11 the 1-thread run grew one heap more in
  // 2 of 9 runs (311 against 222-230 MB; the cause is not isolated).
  EXPECT_NEAR(static_cast<double>(b.footprint_peak_bytes), static_cast<double>(a.footprint_peak_bytes),
              96.0 * (1 << 20));
  const std::string limit = " --memory-limit " + std::to_string((a.footprint_peak_bytes >> 20) + 128) + "M";
  const Record limited = run_with(32, limit);
  EXPECT_EQ(limited.status, Status::ok) << limited.error;
  ASSERT_TRUE(limited.memory);
  EXPECT_EQ(limited.memory->inputs_bytes, batch_bytes);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainbench
