// Energy per sample and mean power: the counter arithmetic (wrap-around, domains summed), the meter
// driven by a scripted counter and clock, RAPL zone discovery on a fake powercap tree, and the
// Record's energy fields in JSON and CSV. Every expected value is worked out by hand in the comments.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/energy.h"
#include "core/gpu_clock.h"
#include "results/printer.h"
#include "results/record.h"

namespace trainbench {
namespace {

namespace fs = std::filesystem;

// ---- pure arithmetic -------------------------------------------------------------------------------

TEST(EnergyArithmetic, CounterDeltaWithoutAndAcrossAWrap) {
  EXPECT_EQ(counter_delta(100, 350, 1000), std::optional<uint64_t>(250));
  EXPECT_EQ(counter_delta(350, 350, 1000), std::optional<uint64_t>(0));
  // 900 -> 1000 is 100, then 0 -> 100 is 100 more.
  EXPECT_EQ(counter_delta(900, 100, 1000), std::optional<uint64_t>(200));
  // A real RAPL range (262143328850 uJ): 328850 uJ to the top, then 500000 uJ after the wrap.
  EXPECT_EQ(counter_delta(262143000000ULL, 500000, 262143328850ULL), std::optional<uint64_t>(828850));
  // NVML's counter never wraps (range 0): going down means a reset, not a figure.
  EXPECT_EQ(counter_delta(5000, 7000, 0), std::optional<uint64_t>(2000));
  EXPECT_FALSE(counter_delta(7000, 5000, 0).has_value());
  // A reading above the range is not a reading of this counter.
  EXPECT_FALSE(counter_delta(1001, 5, 1000).has_value());
  EXPECT_FALSE(counter_delta(5, 1001, 1000).has_value());
}

TEST(EnergyArithmetic, JoulesSumTheDomains) {
  // Package 0: 1.0 J -> 3.5 J is 2.5 J. Package 1 wraps at 1000 J: 999 J -> 1000 J is 1 J, then 0.5 J.
  const auto j = joules_between({1'000'000, 999'000'000}, {3'500'000, 500'000}, {262'143'328'850, 1'000'000'000}, 1e-6);
  ASSERT_TRUE(j.has_value());
  EXPECT_DOUBLE_EQ(*j, 4.0);
  // mJ from NVML: 1,000,000 mJ -> 1,250,000 mJ is 250 J.
  EXPECT_DOUBLE_EQ(joules_between({1'000'000}, {1'250'000}, {0}, 1e-3).value(), 250.0);
  EXPECT_FALSE(joules_between({1, 2}, {3}, {0, 0}, 1e-6).has_value()) << "a domain missing at the end";
  EXPECT_FALSE(joules_between({1}, {3}, {0, 0}, 1e-6).has_value()) << "ranges for other domains";
  EXPECT_FALSE(joules_between({}, {}, {}, 1e-6).has_value()) << "no domain at all";
  EXPECT_FALSE(joules_between({10, 7}, {20, 5}, {0, 0}, 1e-6).has_value()) << "one domain went down";
}

TEST(EnergyArithmetic, PerSampleAndMeanPower) {
  // 300 J in 2 s over 600 samples: 0.5 J per sample at 150 W.
  const auto f = energy_figures("rapl", 300.0, 2.0, 600);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->source, "rapl");
  EXPECT_DOUBLE_EQ(f->j_per_sample, 0.5);
  EXPECT_DOUBLE_EQ(f->mean_power_w, 150.0);
  // A powered device never draws 0 W: a counter that did not advance was read within one of its update
  // intervals (seen on an H100: NVML read 0 J over 20 ms windows), and that is no figure.
  EXPECT_FALSE(energy_figures("nvml", 0.0, 0.02, 8).has_value());
  EXPECT_FALSE(energy_figures("rapl", 300.0, 0.0, 600).has_value());
  EXPECT_FALSE(energy_figures("rapl", 300.0, 2.0, 0).has_value());
  EXPECT_FALSE(energy_figures("rapl", -1.0, 2.0, 600).has_value());
  EXPECT_FALSE(energy_figures("rapl", std::nan(""), 2.0, 600).has_value());
}

// ---- the meter with a scripted counter -------------------------------------------------------------

// Hands out the readings it was given, one per read(); an empty optional is a failed read.
class ScriptedCounter : public EnergyCounter {
 public:
  ScriptedCounter(std::vector<uint64_t> ranges, double joules_per_unit,
                  std::deque<std::optional<std::vector<uint64_t>>> readings, double min_window_s = 0.0)
      : ranges_(std::move(ranges)), unit_(joules_per_unit), readings_(std::move(readings)), min_window_(min_window_s) {}
  std::string source() const override { return "fake"; }
  double min_window_s() const override { return min_window_; }
  double joules_per_unit() const override { return unit_; }
  std::vector<uint64_t> ranges() const override { return ranges_; }
  std::optional<std::vector<uint64_t>> read() override {
    if (readings_.empty()) return {};
    auto r = readings_.front();
    readings_.pop_front();
    return r;
  }

 private:
  std::vector<uint64_t> ranges_;
  double unit_;
  std::deque<std::optional<std::vector<uint64_t>>> readings_;
  double min_window_;
};

std::function<double()> clock_at(std::deque<double> times) {
  auto t = std::make_shared<std::deque<double>>(std::move(times));
  return [t] {
    const double v = t->front();
    t->pop_front();
    return v;
  };
}

TEST(EnergyMeter, FiguresOverTheWindowBetweenStartAndStop) {
  // 1,000,000 mJ -> 1,250,000 mJ = 250 J from 10 s to 12.5 s: 100 W; over 500 samples, 0.5 J each.
  EnergyMeter m(
      std::make_unique<ScriptedCounter>(std::vector<uint64_t>{0}, 1e-3,
                                        std::deque<std::optional<std::vector<uint64_t>>>{
                                            std::vector<uint64_t>{1'000'000}, std::vector<uint64_t>{1'250'000}}),
      clock_at({10.0, 12.5}));
  ASSERT_TRUE(m.available());
  EXPECT_FALSE(m.figures(500).has_value()) << "no window yet";
  m.start();
  EXPECT_FALSE(m.figures(500).has_value()) << "not stopped yet";
  m.stop();
  const auto f = m.figures(500);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->source, "fake");
  EXPECT_DOUBLE_EQ(f->joules, 250.0);
  EXPECT_DOUBLE_EQ(f->seconds, 2.5);
  EXPECT_DOUBLE_EQ(f->mean_power_w, 100.0);
  EXPECT_DOUBLE_EQ(f->j_per_sample, 0.5);
}

TEST(EnergyMeter, ACounterThatDidNotAdvanceGivesNoFigure) {
  EnergyMeter m(std::make_unique<ScriptedCounter>(std::vector<uint64_t>{0}, 1e-3,
                                                  std::deque<std::optional<std::vector<uint64_t>>>{
                                                      std::vector<uint64_t>{5'000}, std::vector<uint64_t>{5'000}}),
                clock_at({1.0, 1.02}));
  m.start();
  m.stop();
  EXPECT_FALSE(m.figures(8).has_value());
}

TEST(EnergyMeter, AWindowShorterThanTheCountersMinimumGivesNoFigure) {
  // 10 J over 0.99 s and over 1.0 s, from a counter that measures windows of 1 s and more.
  for (double stop : {10.99, 11.0}) {
    EnergyMeter m(std::make_unique<ScriptedCounter>(std::vector<uint64_t>{0}, 1e-3,
                                                    std::deque<std::optional<std::vector<uint64_t>>>{
                                                        std::vector<uint64_t>{0}, std::vector<uint64_t>{10'000}},
                                                    1.0),
                  clock_at({10.0, stop}));
    m.start();
    m.stop();
    EXPECT_EQ(m.figures(8).has_value(), stop == 11.0) << "window " << stop - 10.0 << " s";
  }
}

TEST(EnergyMeter, TwoPackagesOneWrappingInTheWindow) {
  // uJ; package 1 wraps at 2,000,000: 1,900,000 -> top is 0.1 J, then 0.3 J. Package 0: 0.6 J. 1.0 J in 0.5 s.
  EnergyMeter m(std::make_unique<ScriptedCounter>(
                    std::vector<uint64_t>{262'143'328'850, 2'000'000}, 1e-6,
                    std::deque<std::optional<std::vector<uint64_t>>>{std::vector<uint64_t>{400'000, 1'900'000},
                                                                     std::vector<uint64_t>{1'000'000, 300'000}}),
                clock_at({0.25, 0.75}));
  m.start();
  m.stop();
  const auto f = m.figures(4);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->joules, 1.0, 1e-12);
  EXPECT_NEAR(f->mean_power_w, 2.0, 1e-12);
  EXPECT_NEAR(f->j_per_sample, 0.25, 1e-12);
}

TEST(EnergyMeter, NoCounterOrAFailedReadGivesNoFigure) {
  EnergyMeter none(nullptr);
  EXPECT_FALSE(none.available());
  none.start();
  none.stop();
  EXPECT_FALSE(none.figures(10).has_value());

  using Readings = std::deque<std::optional<std::vector<uint64_t>>>;
  EnergyMeter failed_stop(std::make_unique<ScriptedCounter>(std::vector<uint64_t>{0}, 1e-3,
                                                            Readings{std::vector<uint64_t>{5}, std::nullopt}),
                          clock_at({1.0, 2.0}));
  failed_stop.start();
  failed_stop.stop();
  EXPECT_FALSE(failed_stop.figures(10).has_value());

  EnergyMeter failed_start(std::make_unique<ScriptedCounter>(std::vector<uint64_t>{0}, 1e-3,
                                                             Readings{std::nullopt, std::vector<uint64_t>{5}}),
                           clock_at({1.0, 2.0}));
  failed_start.start();
  failed_start.stop();
  EXPECT_FALSE(failed_start.figures(10).has_value());
}

TEST(EnergyMeter, NoNvmlMeansNoGpuEnergy) {
  const NvmlLibrary missing("libtrainbench-no-such-nvml.so.1");
  EXPECT_FALSE(missing.available());
  EXPECT_FALSE(missing.total_energy_mj(nullptr).has_value());
  // A ROCm build or a machine without NVML: a GPU case gets no counter and null figures. (With NVML:
  // NvmlWindowReadsAPhysicalPower.)
  if (is_rocm_build() || !NvmlLibrary().available()) {
    EnergyMeter m = EnergyMeter::for_device(parse_device("cuda"));
    EXPECT_FALSE(m.available());
    m.start();
    m.stop();
    EXPECT_FALSE(m.figures(10).has_value());
  }
}

// Where NVML has the GPU's energy counter (Volta and newer), a second of the GPU as it is reads a power
// a powered GPU draws: above 1 W (an idle data-centre GPU draws tens of watts, a desktop one several;
// the counter's millijoules taken for microjoules would give under 1 W) and below 1500 W (above any
// single GPU's board limit: H100/H200 700 W, B200 1000 W). The window is the second slept, as the steady
// clock measures it (a loaded machine stretches a sleep, never shortens it).
TEST(EnergyMeter, NvmlWindowReadsAPhysicalPower) {
  if (is_rocm_build() || !NvmlLibrary().available()) GTEST_SKIP() << "no NVML here";
  EnergyMeter m = EnergyMeter::for_device(parse_device("cuda"));
  if (!m.available()) GTEST_SKIP() << "NVML without a total-energy counter for GPU 0 (before Volta?)";
  m.start();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  m.stop();
  const auto f = m.figures(100);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->source, "nvml");
  EXPECT_GE(f->seconds, 1.0);
  EXPECT_LT(f->seconds, 3.0);
  EXPECT_GT(f->mean_power_w, 1.0);
  EXPECT_LT(f->mean_power_w, 1500.0);
}

// ---- RAPL zones on a fake powercap tree ------------------------------------------------------------

class FakePowercap {
 public:
  FakePowercap() : root_(fs::temp_directory_path() / ("trainbench-powercap-" + std::to_string(getpid()))) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~FakePowercap() { fs::remove_all(root_); }
  void zone(const std::string& dir, const std::string& name, uint64_t energy_uj, uint64_t range_uj) {
    fs::create_directories(root_ / dir);
    write(dir + "/name", name);
    write(dir + "/energy_uj", std::to_string(energy_uj));
    write(dir + "/max_energy_range_uj", std::to_string(range_uj));
  }
  void write(const std::string& file, const std::string& text) { std::ofstream(root_ / file) << text << "\n"; }
  std::string path() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(RaplCounter, SumsThePackagesAndNothingElse) {
  FakePowercap pc;
  constexpr uint64_t kRange = 262'143'328'850;
  pc.zone("intel-rapl:0", "package-0", 10'000'000, kRange);
  pc.zone("intel-rapl:0:0", "core", 7'000'000, kRange);  // inside package 0
  pc.zone("intel-rapl:0:1", "dram", 3'000'000, kRange);  // memory, not the package
  pc.zone("intel-rapl:1", "package-1", kRange - 1'000'000, kRange);
  pc.zone("intel-rapl:2", "psys", 90'000'000, kRange);            // the whole platform
  pc.zone("intel-rapl-mmio:0", "package-0", 10'000'000, kRange);  // package 0 again, over MMIO
  fs::create_directories(fs::path(pc.path()) / "intel-rapl");     // the control type: no zone

  auto counter = rapl_energy_counter(pc.path());
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(counter->source(), "rapl");
  EXPECT_EQ(counter->ranges(), (std::vector<uint64_t>{kRange, kRange}));
  EXPECT_EQ(counter->read(), (std::vector<uint64_t>{10'000'000, kRange - 1'000'000}));

  // Over the window: package 0 +2 J; package 1 wraps: 1 J to the top and 0.5 J after; core, dram,
  // psys and the MMIO copy move too and must not count. 3.5 J.
  EnergyMeter m(std::move(counter), clock_at({0.0, 0.5}));
  m.start();
  pc.write("intel-rapl:0/energy_uj", "12000000");
  pc.write("intel-rapl:1/energy_uj", "500000");
  pc.write("intel-rapl:0:0/energy_uj", "9000000");
  pc.write("intel-rapl:0:1/energy_uj", "8000000");
  pc.write("intel-rapl:2/energy_uj", "99000000");
  pc.write("intel-rapl-mmio:0/energy_uj", "12000000");
  m.stop();
  const auto f = m.figures(7);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->joules, 3.5, 1e-9);
  EXPECT_NEAR(f->mean_power_w, 7.0, 1e-9);
  EXPECT_NEAR(f->j_per_sample, 0.5, 1e-9);
}

TEST(RaplCounter, AbsentOrUnreadableIsNoCounter) {
  FakePowercap pc;
  EXPECT_EQ(rapl_energy_counter(pc.path()), nullptr) << "empty folder";
  EXPECT_EQ(rapl_energy_counter(pc.path() + "/does-not-exist"), nullptr);
  pc.zone("intel-rapl:0", "psys", 1, 1000);
  EXPECT_EQ(rapl_energy_counter(pc.path()), nullptr) << "no package zone";
  pc.zone("intel-rapl:1", "package-0", 1, 1000);
  pc.zone("intel-rapl:2", "package-1", 1, 1000);
  fs::remove(fs::path(pc.path()) / "intel-rapl:2/energy_uj");  // as when energy_uj is root-only
  EXPECT_EQ(rapl_energy_counter(pc.path()), nullptr) << "one package of two would undercount";
}

// ---- the Record's energy fields --------------------------------------------------------------------

TEST(EnergyRecord, JsonRoundTripNullsAndCsvColumns) {
  Record r;
  r.name = "resnet50:b64:bf16:nchw:cuda:0";
  r.status = Status::ok;
  r.energy_j_per_sample = 0.75;
  r.mean_power_w = 612.5;
  r.energy_source = "nvml";
  const auto j = to_json(r);
  EXPECT_EQ(j.at("energy_j_per_sample"), 0.75);
  EXPECT_EQ(j.at("mean_power_w"), 612.5);
  EXPECT_EQ(j.at("energy_source"), "nvml");
  const Record back = record_from_json(j);
  EXPECT_EQ(back.energy_j_per_sample, 0.75);
  EXPECT_EQ(back.mean_power_w, 612.5);
  EXPECT_EQ(back.energy_source, std::optional<std::string>("nvml"));

  const auto none = to_json(Record{});
  EXPECT_TRUE(none.at("energy_j_per_sample").is_null());
  EXPECT_TRUE(none.at("mean_power_w").is_null());
  EXPECT_TRUE(none.at("energy_source").is_null());

  auto old = j;  // a file written before the energy fields
  for (const char* k : {"energy_j_per_sample", "mean_power_w", "energy_source"}) old.erase(k);
  const Record o = record_from_json(old);
  EXPECT_TRUE(std::isnan(o.energy_j_per_sample));
  EXPECT_TRUE(std::isnan(o.mean_power_w));
  EXPECT_FALSE(o.energy_source.has_value());
  auto wrong = j;
  wrong["mean_power_w"] = "lots";
  EXPECT_THROW(record_from_json(wrong), std::runtime_error);

  // CSV: the energy columns, then the three real-data columns (empty without --data), in the header
  // and in each row at the same place; the columns after them (model FLOPs, memory) are empty here.
  const std::string csv = print_csv({r, Record{}});
  const auto header_end = csv.find('\n');
  const std::string header = csv.substr(0, header_end);
  const std::string block = ",energy_j_per_sample,mean_power_w,energy_source,data_source,data_wait_share,data_verdict,";
  const auto at = header.find(block);
  ASSERT_NE(at, std::string::npos) << header;
  const auto after = std::count(header.begin() + static_cast<long>(at + block.size()), header.end(), ',');
  const auto row_end = csv.find('\n', header_end + 1);
  const std::string row = csv.substr(header_end + 1, row_end - header_end - 1);
  const std::string cells = ",0.75,612.5,nvml,,,," + std::string(static_cast<size_t>(after), ',');
  EXPECT_EQ(row.substr(row.size() - cells.size()), cells);
  const std::string empty_row = csv.substr(row_end + 1, csv.find('\n', row_end + 1) - row_end - 1);
  const std::string empty_cells = std::string(static_cast<size_t>(7 + after), ',');
  EXPECT_EQ(empty_row.substr(empty_row.size() - empty_cells.size()), empty_cells) << "unmeasured energy is empty cells";
}

}  // namespace
}  // namespace trainbench
