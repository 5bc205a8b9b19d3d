// The input pipeline around the images: data wait measured by the one step sampler (an instant source
// and a slowed one), the verdict, token windows and masking, bad token ids, the record's `data`
// object and the descriptor's data fields.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "data_util.h"
#include "data/data_error.h"
#include "data/loader.h"
#include "data/source_check.h"
#include "data/token_file.h"
#include "data/token_source.h"
#include "data/verdict.h"
#include "results/printer.h"
#include "results/record.h"
#include "cases/case.h"
#include "runner/step_sampler.h"

namespace trainbench {
namespace {

namespace fs = std::filesystem;
using namespace data;

using test::FakeSource;

// A workload fed by a loader whose step itself takes `step_s`.
class FedWorkload final : public Workload {
 public:
  FedWorkload(std::shared_ptr<BatchSource> source, double step_s) : loader_(std::move(source), 1, 2), step_s_(step_s) {}
  void next_batch() override { (void)loader_.next(); }
  void step() override {
    if (step_s_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(step_s_));
  }
  int64_t samples_per_step() const override { return 1; }
  std::string unit() const override { return "images/s"; }
  double flops_per_step() const override { return 0.0; }
  int64_t parameters() const override { return 0; }
  double last_loss() const override { return 0.0; }
  std::optional<LoaderStats> loader_stats() const override { return loader_.stats(); }

 private:
  Loader loader_;
  double step_s_;
};

MeasureSettings few_steps() {
  MeasureSettings m;
  m.warmup_steps = 2;
  m.min_steps = 12;
  m.max_steps = 12;
  m.min_time_s = 0.0;
  m.max_time_s = 30.0;
  return m;
}

TEST(DataWait, ZeroWhenTheBatchIsReadyAndTheDelayWhenTheLoaderIsSlow) {
  DeviceSpec cpu;
  // Instant source, a 50 ms step: the loader is always ahead and the batch waits in the queue; the wait
  // is only the hand-over (a lock and a pop, microseconds). The bound is a tenth of the slow source's
  // delay below, so that a loaded machine's preemptions do not fail it while a wait for the loader would;
  // and the step is long enough that a preempted hand-over or two (a few ms under ctest -j2) stays far
  // under the verdict's 5% share.
  FedWorkload fast(std::make_shared<FakeSource>(0.0), 0.050);
  const SampledSteps a = sample_steps(fast, cpu, few_steps());
  ASSERT_EQ(a.data_wait.size(), a.own.size());
  EXPECT_LT(summarize(a.data_wait).median, 0.003);
  // A source slowed to 30 ms a batch and an instant step: each step waits the loader's delay (one thread).
  FedWorkload slow(std::make_shared<FakeSource>(0.030), 0.0);
  const SampledSteps b = sample_steps(slow, cpu, few_steps());
  const double wait = summarize(b.data_wait).median;
  EXPECT_GT(wait, 0.025);
  EXPECT_LT(wait, 0.060);
  // The wait is inside the step's time.
  for (size_t i = 0; i < b.own.size(); ++i) EXPECT_LE(b.data_wait[i], b.own[i]);
  const DataInfo d = make_data_info(*slow.loader_stats(), b.own, b.data_wait, 1);
  EXPECT_EQ(d.verdict, "input-bound");
  EXPECT_GT(d.wait_share, 0.9);
  const DataInfo f = make_data_info(*fast.loader_stats(), a.own, a.data_wait, 1);
  EXPECT_EQ(f.verdict, "compute-bound");
}

TEST(Loader, BatchesArriveInIndexOrderWhenALaterOneIsReadyFirst) {
  // Batch 0 takes 80 ms and the rest none: with 3 threads, batches 1, 2, ... are finished long before
  // batch 0, and still come out after it, each once, in index order.
  Loader loader(std::make_shared<FakeSource>(0.0, 0.080), 3, 6);
  for (int64_t i = 0; i < 12; ++i) {
    const Batch b = loader.next();
    EXPECT_EQ(b.index, i);
    EXPECT_EQ(b.tensors[0].item<int64_t>(), i);  // the batch made for index i
  }
}

TEST(DataVerdict, ShareAndThreadsNeededFollowFromTheFigures) {
  LoaderStats s;
  s.threads = 2;
  s.samples = 400;
  s.busy_thread_s = 4.0;  // 100 samples per thread-second: 200/s on 2 threads
  // Steps of 0.1 s of which 0.05 s waiting, batch 10: the model alone would take 10 / 0.05 = 200/s...
  const DataInfo d = make_data_info(s, {0.1, 0.1, 0.1}, {0.05, 0.05, 0.05}, 10);
  EXPECT_DOUBLE_EQ(d.loader_samples_s, 200.0);
  EXPECT_NEAR(d.model_samples_s, 200.0, 1e-9);
  EXPECT_NEAR(d.wait_share, 0.5, 1e-12);
  EXPECT_EQ(d.verdict, "input-bound");
  EXPECT_EQ(d.threads_needed, 2);  // 200/s at 100/s a thread
  // ... and 4% waiting is under the 5% rule: compute-bound.
  const DataInfo c = make_data_info(s, {1.0, 1.0}, {0.04, 0.04}, 10);
  EXPECT_EQ(c.verdict, "compute-bound");
}

// A token file of `ids`, as `dtype`.
fs::path write_tokens(const fs::path& p, const std::vector<uint32_t>& ids, bool wide) {
  std::ofstream out(p, std::ios::binary);
  for (uint32_t v : ids) {
    if (wide) {
      out.write(reinterpret_cast<const char*>(&v), 4);
    } else {
      const uint16_t h = static_cast<uint16_t>(v);
      out.write(reinterpret_cast<const char*>(&h), 2);
    }
  }
  return p;
}

TEST(TokenSource, WindowsAreContiguousRunsAndNextTokenTargetsAreShiftedByOne) {
  const fs::path d = test::temp_dir("data", "windows");
  std::vector<uint32_t> ids(1000);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint32_t>(i);  // id == offset: windows are checkable
  auto file = std::make_shared<TokenFile>(write_tokens(d / "t.bin", ids, false).string(), "uint16");
  EXPECT_EQ(file->size(), 1000);
  TokenSourceOptions o;
  o.batch = 8;
  o.seq = 16;
  o.vocab = 1000;
  TokenWindowSource src(file, o);
  StageTimes t;
  const Batch b = src.make(3, t);
  ASSERT_EQ(b.tensors[0].sizes().vec(), (std::vector<int64_t>{8, 16}));
  for (int64_t k = 0; k < 8; ++k) {
    const int64_t at = b.items[k];
    EXPECT_LE(at + 17, 1000);  // seq + 1 tokens fit
    for (int64_t i = 0; i < 16; ++i) {
      EXPECT_EQ(b.tensors[0][k][i].item<int64_t>(), at + i);
      EXPECT_EQ(b.tensors[1][k][i].item<int64_t>(), at + i + 1);
    }
  }
  // The same index gives the same windows (seeded by index, whichever thread makes it); another does not.
  EXPECT_EQ(src.make(3, t).items, b.items);
  EXPECT_NE(src.make(4, t).items, b.items);
  // uint32 files read the same ids.
  auto wide = std::make_shared<TokenFile>(write_tokens(d / "w.bin", ids, true).string(), "uint32");
  EXPECT_EQ(wide->size(), 1000);
  int64_t id = 0;
  wide->read(777, 1, &id);
  EXPECT_EQ(id, 777);
  fs::remove_all(d);
}

// A token file truncated after it was mapped: reading a window that is no longer there is an error
// naming the file, not a SIGBUS that ends the process (the test binary would die here without the
// guard). Reads before the new end still work, and so does a fresh mapping of the shrunk file.
TEST(TokenSource, AFileTruncatedUnderTheMappingIsAnErrorNotACrash) {
  const fs::path d = test::temp_dir("data", "shrunk");
  std::vector<uint32_t> ids(1 << 20);  // 2 MiB of uint16: many pages
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint32_t>(i % 1000);
  const std::string path = write_tokens(d / "t.bin", ids, false).string();
  TokenFile file(path, "uint16");
  std::vector<int64_t> window(64);
  file.read(900'000, 64, window.data());
  EXPECT_EQ(window[0], 900'000 % 1000);
  fs::resize_file(path, 8192);  // two pages: 4096 tokens left
  try {
    file.read(900'000, 64, window.data());
    ADD_FAILURE() << "a read past the truncated end returned";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": the file shrank while it was read (2097152 bytes when opened, "
                                                "8192 bytes now; token 900000 is no longer there)"),
              std::string::npos)
        << e.what();
  }
  file.read(100, 64, window.data());
  EXPECT_EQ(window[63], 163);
  // A SIGBUS outside a guarded read keeps its default action: a forked child that raises one dies by it.
  const pid_t child = fork();
  if (child == 0) {
    raise(SIGBUS);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) << status;
  fs::remove_all(d);
}

TEST(TokenSource, MaskedLmMasksFifteenPercentEightyTenTen) {
  const fs::path d = test::temp_dir("data", "mlm");
  std::vector<uint32_t> ids(5000);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = 200 + static_cast<uint32_t>(i % 700);  // never 103, the [MASK] id
  auto file = std::make_shared<TokenFile>(write_tokens(d / "t.bin", ids, false).string(), "uint16");
  TokenSourceOptions o;
  o.batch = 64;
  o.seq = 128;
  o.vocab = 30522;
  o.target = TokenTarget::masked_lm;
  TokenWindowSource src(file, o);
  int64_t positions = 0, chosen = 0, masked = 0, kept = 0, replaced = 0;
  StageTimes t;
  for (int i = 0; i < 4; ++i) {
    const Batch b = src.make(i, t);
    const auto in = b.tensors[0].accessor<int64_t, 2>();
    const auto lab = b.tensors[1].accessor<int64_t, 2>();
    for (int64_t k = 0; k < o.batch; ++k) {
      for (int64_t p = 0; p < o.seq; ++p) {
        const int64_t original = ids[b.items[k] + p];
        const int64_t x = in[k][p], l = lab[k][p];
        ++positions;
        if (l == kIgnoreLabel) {
          EXPECT_EQ(x, original);  // not chosen: untouched
          continue;
        }
        EXPECT_EQ(l, original);  // the label is the original token
        ++chosen;
        if (x == 103) {
          ++masked;
        } else if (x == original) {
          ++kept;
        } else {
          ++replaced;
        }
      }
    }
  }
  // 32768 positions, p = 0.15: sd = sqrt(n p (1-p)) / n = 0.002; 5 sd bounds.
  const double share = double(chosen) / positions;
  EXPECT_NEAR(share, 0.15, 0.01);
  // ~4900 chosen: the 80/10/10 split within 5 sd (0.8: sd 0.0057; 0.1: sd 0.0043). A random replacement
  // equal to the original (1 in 30522) counts as kept: negligible.
  EXPECT_NEAR(double(masked) / chosen, 0.8, 0.03);
  EXPECT_NEAR(double(kept) / chosen, 0.1, 0.022);
  EXPECT_NEAR(double(replaced) / chosen, 0.1, 0.022);
  fs::remove_all(d);
}

TEST(TokenSource, IdsAtOrAboveTheVocabularyAreRefusedNamingFileOffsetAndValue) {
  const fs::path d = test::temp_dir("data", "badids");
  std::vector<uint32_t> ids(100, 5);
  ids[42] = 700;
  ids[60] = 900;
  const std::string path = write_tokens(d / "t.bin", ids, false).string();
  try {
    check_data_source("bert", DataKind::tokens, path, "uint16", 512);
    ADD_FAILURE() << "no error";
  } catch (const DataError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("token id 700 at offset 42 (byte 84)"), std::string::npos) << m;
  }
  EXPECT_NO_THROW(check_data_source("bert", DataKind::tokens, path, "uint16", 901));
  // A file of an odd byte count is no uint16 or uint32 token file.
  std::ofstream(d / "odd.bin", std::ios::binary) << "abc";
  EXPECT_THROW(TokenFile((d / "odd.bin").string(), "uint16"), DataError);
  // Kinds: a token file for a CNN, a folder for bert, data for a synthetic-only model.
  EXPECT_THROW(check_data_source("resnet18", DataKind::images, path, "uint16", std::nullopt), DataError);
  EXPECT_THROW(check_data_source("bert", DataKind::tokens, d.string(), "uint16", 512), DataError);
  EXPECT_THROW(check_data_source("convnet", DataKind::none, path, "uint16", std::nullopt), DataError);
  fs::remove_all(d);
}

TEST(DataRecord, RoundTripsAndOldFilesReadWithoutIt) {
  Record r;
  r.name = "resnet18:b4:fp32:nchw:data=/x/y:loader=2:cpu";
  r.model = "resnet18";
  r.batch_size = 4;
  r.status = Status::ok;
  r.unit = "images/s";
  r.device = "cpu";
  DataInfo d;
  d.source = "/x/y";
  d.kind = "images";
  d.files = 120;
  d.loader_threads = 2;
  d.loader_samples_s = 410;
  d.loader_mb_s = 31;
  d.model_samples_s = 1180;
  d.mean_wait_s = 0.1;
  d.median_wait_s = 0.09;
  d.wait_share = 0.6;
  d.skipped_files = 1;
  d.first_skipped = "/x/y/a/bad.jpg";
  d.verdict = "input-bound";
  d.threads_needed = 6;
  r.data = d;
  const Record back = record_from_json(nlohmann::json::parse(to_json(r).dump()));
  ASSERT_TRUE(back.data.has_value());
  EXPECT_EQ(to_json(back)["data"], to_json(r)["data"]);
  EXPECT_EQ(back.data->first_skipped, "/x/y/a/bad.jpg");
  auto old = to_json(r);
  old.erase("data");
  EXPECT_FALSE(record_from_json(old).data.has_value());
  // The footer says which side limits, with the figures.
  const std::string line = data_verdict_line(r);
  EXPECT_NE(line.find("input-bound: the loader delivers 410 images/s on 2 threads; the model consumes 1180 images/s"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("~6 loader threads needed"), std::string::npos) << line;
  EXPECT_NE(line.find("1 file(s) skipped"), std::string::npos) << line;
  auto bad = to_json(r);
  bad["data"]["wait_share"] = 3.0;  // a share above 1 is no measurement
  EXPECT_THROW(record_from_json(bad), std::runtime_error);
}

TEST(DataDescriptor, DataFieldsRoundTripAndNeedAPath) {
  for (const std::string s :
       {"resnet18:b4:fp32:nchw:data=/data/train:cpu", "resnet18:b4:fp32:nchw:t2:data=/data/a%2Cb%3Dc:loader=4:cpu",
        "bert:layers=2:b8:fp32:nchw:data=/t/tok.bin:data-dtype=uint32:loader=1:cpu"}) {
    EXPECT_EQ(parse_case(s).descriptor(), s);
  }
  const Case c = parse_case("bilstm:b8:fp32:nchw:loader=3:data=/t/x.bin:cpu");
  EXPECT_EQ(c.data, "/t/x.bin");
  EXPECT_EQ(c.loader_threads, 3);
  EXPECT_EQ(c.descriptor(), "bilstm:b8:fp32:nchw:data=/t/x.bin:loader=3:cpu");
  // The path is percent-escaped as parameter values are (docs/descriptors.md): ':' is %3A, ',' %2C,
  // '=' %3D, space %20 and '%' %25; a path written raw (as before escaping) still reads.
  const Case odd = parse_case("resnet18:b4:fp32:nchw:data=/mnt/c%3A/my%20train%2Cv%3D1%25:cpu");
  EXPECT_EQ(odd.data, "/mnt/c:/my train,v=1%");
  EXPECT_EQ(parse_case(odd.descriptor()).data, odd.data);
  EXPECT_EQ(parse_case("resnet18:b4:fp32:nchw:data=/data/a,b=c:cpu").data, "/data/a,b=c");
  EXPECT_THROW(parse_case("resnet18:b4:data=/a%2:cpu"), DescriptorError);
  EXPECT_THROW(parse_case("resnet18:b4:loader=2:cpu"), DescriptorError);
  EXPECT_THROW(parse_case("resnet18:b4:data=:cpu"), DescriptorError);
  EXPECT_THROW(parse_case("resnet18:b4:data=/a:loader=0:cpu"), DescriptorError);
  EXPECT_THROW(parse_case("resnet18:b4:data=/a:data-dtype=int8:cpu"), DescriptorError);
  EXPECT_EQ(parse_case("resnet18:b4:cpu").data, "synthetic");
}

}  // namespace
}  // namespace trainbench
