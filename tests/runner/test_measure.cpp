// The one step sampler and measure_workload, with workloads whose behaviour the test controls: the
// stopping floor, the noise mark, failures by type, and the timing fields a Record gets.
#include <gtest/gtest.h>

#include <c10/util/Exception.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "runner/measure.h"
#include "runner/step_sampler.h"

namespace trainbench {
namespace {

// Sleeps the given durations in turn (seconds), cycling.
class SleepingWorkload final : public Workload {
 public:
  explicit SleepingWorkload(std::vector<double> steps_s) : steps_(std::move(steps_s)) {}
  void step() override {
    std::this_thread::sleep_for(std::chrono::duration<double>(steps_[i_++ % steps_.size()]));
    ++calls_;
  }
  int64_t samples_per_step() const override { return 4; }
  std::string unit() const override { return "images/s"; }
  double flops_per_step() const override { return 1e6; }
  int64_t parameters() const override { return 7; }
  double last_loss() const override { return 1.0; }
  long calls() const { return calls_; }

 private:
  std::vector<double> steps_;
  size_t i_ = 0;
  long calls_ = 0;
};

// Throws what `fail` throws from its n-th step.
class FailingWorkload final : public Workload {
 public:
  FailingWorkload(std::function<void()> fail, int at_step) : fail_(std::move(fail)), at_(at_step) {}
  void step() override {
    if (++n_ >= at_) fail_();
  }
  int64_t samples_per_step() const override { return 1; }
  std::string unit() const override { return "images/s"; }
  double flops_per_step() const override { return 0.0; }
  int64_t parameters() const override { return 0; }
  double last_loss() const override { return 0.0; }

 private:
  std::function<void()> fail_;
  int at_;
  int n_ = 0;
};

Case cpu_case() {
  Case c;
  c.model = "convnet";
  c.batch = 4;
  return c;
}

TEST(StepSampler, MinimumStepsHoldAgainstATinyMaxTime) {
  MeasureSettings m;
  m.warmup_steps = 1;
  m.warmup_fixed = true;
  m.min_steps = 5;
  m.min_time_s = 0.0;
  m.max_time_s = 0.001;  // over after the first step
  m.max_noise = 0.0001;
  // 2, 8, 3 and 9 ms in turn: any 5 steps in a row are 1 ms from their median at the middle one (MAD
  // 1 ms), so the median's noise is about 9%, far above 0.01%. (Two values alternating left a MAD of
  // only the sleeps' overshoot, which on a quiet machine met the 0.01% target.)
  const Record r = measure_workload(cpu_case(), m, [] {
    return std::make_unique<SleepingWorkload>(std::vector<double>{0.002, 0.008, 0.003, 0.009});
  });
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.step_time_s.n, 5);
  EXPECT_EQ(r.samples_s.size(), 5u);
  EXPECT_EQ(r.stop_reason, "max_time");
  EXPECT_EQ(r.noise_target_met, std::optional<bool>(false));
  EXPECT_DOUBLE_EQ(r.noise_target, 0.0001);
  EXPECT_EQ(r.warmup_steps, 1);
  // Alternating low and high steps: each is the opposite of the one before (lag-1 from -0.73 to -0.83
  // over the four windows of 5, not 0).
  EXPECT_LT(r.step_time_s.lag1_autocorrelation, -0.5);
}

TEST(StepSampler, ConvergedRowsMeetTheirTarget) {
  MeasureSettings m;
  m.warmup_steps = 0;
  m.warmup_fixed = true;
  m.min_steps = 3;
  m.min_time_s = 0.0;
  m.max_noise = 0.5;  // 50%: any three 3-ms sleeps meet it
  const Record r =
      measure_workload(cpu_case(), m, [] { return std::make_unique<SleepingWorkload>(std::vector<double>{0.003}); });
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.stop_reason, "converged");
  EXPECT_EQ(r.noise_target_met, std::optional<bool>(true));
  EXPECT_EQ(r.warmup_steps, 0);
  // Throughput from the samples: samples_per_step / median, measured sleeps of at least 3 ms.
  EXPECT_NEAR(r.throughput, 4.0 / r.step_time_s.median, 1e-9);
  EXPECT_LE(r.throughput, 4.0 / 0.003);
}

TEST(StepSampler, WarmupCountIsBoundedByMaxTime) {
  MeasureSettings m;
  m.warmup_steps = 99999999999L;
  m.min_steps = 2;
  m.min_time_s = 0.0;
  m.max_time_s = 0.05;
  SleepingWorkload w({0.005});
  const SampledSteps s = sample_steps(w, DeviceSpec{}, m);
  EXPECT_GE(s.warmup_steps, 1);
  EXPECT_LE(s.warmup_steps, 11);  // 0.05 s of 5-ms steps, plus the one that crosses the bound
  EXPECT_GE(s.warmup_time_s, 0.05);
  EXPECT_EQ(s.own.size(), s.agreed.size());
  EXPECT_EQ(s.own, s.agreed) << "without agreement the stopping rule sees this process's steps";
}

// Slow for its first `slow_steps` steps, then `fast_s` a step: with `decay`, step i of those sleeps
// fast_s * (1 + slow_steps - i) (a JIT or an allocator warming up: 5x, 4x, 3x, 2x for 4), else
// `slow_s` each (a profiling executor's equal runs). `min_warmup` is what it says it needs.
class SettlingWorkload final : public Workload {
 public:
  SettlingWorkload(int slow_steps, double slow_s, double fast_s, long min_warmup = 0, bool decay = false)
      : slow_steps_(slow_steps), slow_s_(slow_s), fast_s_(fast_s), min_warmup_(min_warmup), decay_(decay) {}
  void step() override {
    const int i = n_++;
    const double s = i >= slow_steps_ ? fast_s_ : decay_ ? fast_s_ * (1 + slow_steps_ - i) : slow_s_;
    std::this_thread::sleep_for(std::chrono::duration<double>(s));
  }
  int64_t samples_per_step() const override { return 1; }
  std::string unit() const override { return "images/s"; }
  double flops_per_step() const override { return 0.0; }
  int64_t parameters() const override { return 0; }
  double last_loss() const override { return 0.0; }
  long min_warmup_steps() const override { return min_warmup_; }

 private:
  int slow_steps_, n_ = 0;
  double slow_s_, fast_s_;
  long min_warmup_;
  bool decay_;
};

MeasureSettings settling_settings() {
  MeasureSettings m;  // default warm-up: at least 2 steps, then until the last 3 agree within 10%
  m.min_steps = 9;
  m.max_steps = 9;
  m.min_time_s = 0.0;
  m.max_time_s = 10.0;
  return m;
}

// 4 steps slower by a known amount (50, 40, 30, 20 ms), then 10 ms: the default warm-up outlasts them
// and the 3 after them that show the time has settled (7 steps at least; a loaded machine's late
// wake-up can add some), so no measured step is a slow one (a single step's time is not asserted: a
// loaded machine may wake any sleep late) and the record says nothing settles.
TEST(StepSampler, DefaultWarmupWaitsUntilTheStepTimeSettles) {
  SettlingWorkload w(4, 0.0, 0.010, 0, true);
  const SampledSteps s = sample_steps(w, DeviceSpec{}, settling_settings());
  EXPECT_GE(s.warmup_steps, 4 + 3);  // steps 0-3 are the slow ones: none is measured
  EXPECT_LT(summarize(s.own).median, 0.018);
  EXPECT_FALSE(s.still_settling);
}

// Equal slow steps look settled to any rule that cannot see the future: a workload that knows it
// runs them (a TorchScript executor's profiling) says so, and the warm-up waits them out and 3 more.
TEST(StepSampler, EqualSlowStepsAreWaitedOutByTheWorkloadsMinimum) {
  SettlingWorkload w(4, 0.040, 0.010, 4);
  const SampledSteps s = sample_steps(w, DeviceSpec{}, settling_settings());
  EXPECT_GE(s.warmup_steps, 4 + 3);
  EXPECT_LT(summarize(s.own).median, 0.030);
}

// A fixed --warmup 1 is kept: the next 3 slow steps are measured, and the record says so.
TEST(StepSampler, AFixedWarmupIsKeptAndTheRecordSaysTheStepsWereStillSettling) {
  MeasureSettings m = settling_settings();
  m.warmup_steps = 1;
  m.warmup_fixed = true;
  SettlingWorkload w(4, 0.040, 0.010);
  const SampledSteps s = sample_steps(w, DeviceSpec{}, m);
  EXPECT_EQ(s.warmup_steps, 1);
  ASSERT_EQ(s.own.size(), 9u);
  EXPECT_GT(s.own[0], 0.035);
  EXPECT_TRUE(s.still_settling);
  Record r;
  fill_timing(r, s.agreed, s, m);
  EXPECT_EQ(r.still_settling, std::optional<bool>(true));
}

// A workload's own minimum holds even when its steps are steady from the start.
TEST(StepSampler, TheWorkloadsMinimumWarmupHolds) {
  SettlingWorkload w(0, 0.0, 0.002, 6);
  EXPECT_GE(sample_steps(w, DeviceSpec{}, settling_settings()).warmup_steps, 6);
}

// Still settling: the first third (at most 3) of the steps has a median over 10% above the rest's.
TEST(StepSampler, StillSettlingComparesTheFirstStepsWithTheRest) {
  EXPECT_TRUE(still_settling({3, 3, 3, 1, 1, 1, 1, 1, 1}));
  EXPECT_TRUE(still_settling({1.2, 1.2, 1, 1, 1, 1}));  // first 2 of 6: 1.2 > 1.1
  EXPECT_FALSE(still_settling({1.05, 1.05, 1, 1, 1, 1}));
  EXPECT_FALSE(still_settling({3, 1, 1, 1, 1, 1, 1, 1, 1}));  // one slow step among the first 3: median 1
  EXPECT_FALSE(still_settling({9, 9, 1, 1, 1}));              // under 6 steps: no verdict
}

// A fake agreement: another "rank" whose steps are always 10x slower and which drops every third step.
class SlowerPeer final : public StepAgreement {
 public:
  StepView agree(const StepView& mine) override {
    ++n_;
    return {mine.step_s * 10.0, mine.elapsed_s, mine.kept && n_ % 3 != 0};
  }
  void before_measuring() override { ++barriers_; }
  int barriers_ = 0;

 private:
  int n_ = 0;
};

TEST(StepSampler, AgreementDecidesWhatIsKeptAndSeen) {
  MeasureSettings m;
  m.warmup_steps = 2;
  m.warmup_fixed = true;
  m.min_steps = 4;
  m.min_time_s = 0.0;
  m.max_time_s = 30.0;
  m.max_steps = 4;
  SleepingWorkload w({0.001});
  SlowerPeer peer;
  long kept_calls = 0, calls = 0;
  const SampledSteps s = sample_steps(w, DeviceSpec{}, m, &peer, [&](bool kept) {
    ++calls;
    kept_calls += kept ? 1 : 0;
  });
  EXPECT_EQ(peer.barriers_, 1);
  // Warm-up saw calls 1-2; measuring calls 3.. drop each multiple of 3: kept 4, 5, 7, 8 -> 6 measured steps.
  EXPECT_EQ(s.own.size(), 4u);
  EXPECT_EQ(calls, 6);
  EXPECT_EQ(kept_calls, 4);
  for (size_t i = 0; i < s.own.size(); ++i) EXPECT_DOUBLE_EQ(s.agreed[i], 10.0 * s.own[i]);
  EXPECT_EQ(s.stop_reason, "max_steps");
}

TEST(MeasureFailures, OutOfMemoryErrorFromAStepIsOom) {
  const Record r = measure_workload(cpu_case(), MeasureSettings{}, [] {
    return std::make_unique<FailingWorkload>(
        [] { TORCH_CHECK_WITH(OutOfMemoryError, false, "Tried to allocate 2.00 GiB (the caching allocator's type)"); },
        2);
  });
  EXPECT_EQ(r.status, Status::oom);
  EXPECT_NE(r.error.find("Tried to allocate 2.00 GiB"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos);
}

TEST(MeasureFailures, BadAllocWhileBuildingIsOom) {
  const Record r =
      measure_workload(cpu_case(), MeasureSettings{}, []() -> std::unique_ptr<Workload> { throw std::bad_alloc(); });
  EXPECT_EQ(r.status, Status::oom);
  EXPECT_EQ(r.error, "out of memory (std::bad_alloc)");
}

TEST(MeasureFailures, OtherErrorsAreErrorsWithTheirFirstLine) {
  const Record r = measure_workload(cpu_case(), MeasureSettings{}, [] {
    return std::make_unique<FailingWorkload>([] { throw std::runtime_error("shape mismatch\nsecond line"); }, 1);
  });
  EXPECT_EQ(r.status, Status::error);
  EXPECT_EQ(r.error, "shape mismatch");
  const Record c10 = measure_workload(cpu_case(), MeasureSettings{}, [] {
    return std::make_unique<FailingWorkload>([] { TORCH_CHECK(false, "a c10 error"); }, 1);
  });
  EXPECT_EQ(c10.status, Status::error);
  EXPECT_EQ(c10.error, "a c10 error");
  // A c10::Error whose message is an allocation failure (a CPU allocation under RLIMIT_AS) is oom.
  const Record cpu_oom = measure_workload(cpu_case(), MeasureSettings{}, [] {
    return std::make_unique<FailingWorkload>(
        [] { TORCH_CHECK(false, "[enforce fail at alloc_cpu.cpp:75] DefaultCPUAllocator: can't allocate memory"); }, 1);
  });
  EXPECT_EQ(cpu_oom.status, Status::oom);
}

// oneDNN's "could not create a primitive" is out of memory under an address-space limit (where an
// allocation inside primitive creation fails by design: mobilenet_v2 under 700M on LibTorch 2.11) and
// an error without one (a configuration oneDNN cannot run). The limit is set in a forked child.
TEST(MeasureFailures, OneDnnPrimitiveFailureIsOomOnlyUnderAMemoryLimit) {
  const auto primitive = std::make_exception_ptr(std::runtime_error("could not create a primitive"));
  EXPECT_FALSE(failure_of(primitive).out_of_memory);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit lim {};
    lim.rlim_cur = lim.rlim_max = rlim_t{1} << 46;  // 64 TiB: a limit, not a constraint
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
    _exit(failure_of(primitive).out_of_memory ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST(MeasureFailures, AnythingThrownIsAFailureValue) {
  const Failure f = failure_of(std::make_exception_ptr(42));
  EXPECT_FALSE(f.out_of_memory);
  EXPECT_NE(f.line.find("unknown failure"), std::string::npos);
}

}  // namespace
}  // namespace trainbench
