// The throttling filter on injected clock readings, and NVML's absence reported cleanly.
#include <gtest/gtest.h>

#include <string>

#include "core/device.h"
#include "core/energy.h"
#include "core/gpu_clock.h"

namespace trainbench {
namespace {

TEST(ClockFilter, DropsSamplesUnder75PercentOfTheDefaultClock) {
  ClockFilter f(1980.0);  // 75%: 1485 MHz
  EXPECT_TRUE(f.keep(1980.0));
  EXPECT_FALSE(f.keep(1400.0));
  EXPECT_TRUE(f.keep(1485.0));
  EXPECT_TRUE(f.keep(std::nullopt)) << "no reading: kept, and not in the mean";
  EXPECT_FALSE(f.keep(200.0));
  EXPECT_EQ(f.dropped(), 2);
  ASSERT_TRUE(f.mean_kept_mhz().has_value());
  EXPECT_DOUBLE_EQ(*f.mean_kept_mhz(), (1980.0 + 1485.0) / 2);
}

TEST(ClockFilter, WithoutADefaultClockKeepsEverything) {
  ClockFilter f(std::nullopt);
  EXPECT_TRUE(f.keep(100.0));
  EXPECT_EQ(f.dropped(), 0);
  EXPECT_DOUBLE_EQ(*f.mean_kept_mhz(), 100.0);
  EXPECT_FALSE(ClockFilter(1000.0).mean_kept_mhz().has_value());
}

TEST(ClockReader, InjectedReadingsFeedTheFilter) {
  std::vector<double> readings = {1900, 1000, 1950};
  size_t i = 0;
  SmClockReader reader([&]() -> std::optional<double> { return readings.at(i++); }, 1980.0);
  ClockFilter f(reader.default_mhz());
  int kept = 0;
  for (int k = 0; k < 3; ++k) kept += f.keep(reader.read()) ? 1 : 0;
  EXPECT_EQ(kept, 2);
  EXPECT_EQ(f.dropped(), 1);
}

bool nvml_present() {
  const NvmlLibrary nvml;
  return nvml.available();
}

TEST(Nvml, AbsenceIsReportedCleanly) {
  if (nvml_present()) GTEST_SKIP() << "this machine has NVML";
  const NvmlLibrary nvml;
  EXPECT_FALSE(nvml.available());
  EXPECT_NE(nvml.reason().find("libnvidia-ml.so.1"), std::string::npos) << nvml.reason();
  EXPECT_EQ(nvml.device_by_index(0), nullptr);
  EXPECT_FALSE(nvml.sm_clock_mhz(nullptr).has_value());
  EXPECT_FALSE(nvml.driver_version().has_value());
  EXPECT_FALSE(nvidia_driver_version().has_value());
}

TEST(Nvml, ALibraryWithoutTheFunctionsIsNotNvml) {
  const NvmlLibrary not_nvml("libm.so.6");
  EXPECT_FALSE(not_nvml.available());
  EXPECT_NE(not_nvml.reason().find("lacks"), std::string::npos) << not_nvml.reason();
  EXPECT_NE(NvmlLibrary("libtrainbench-no-such-library.so").reason().find("not present"), std::string::npos);
}

TEST(ClockReader, CpuHasNoClock) {
  const auto r = SmClockReader::for_device(DeviceSpec{});
  EXPECT_FALSE(r->read().has_value());
  EXPECT_FALSE(r->default_mhz().has_value());
}

}  // namespace
}  // namespace trainbench
