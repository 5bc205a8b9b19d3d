// The stopping settings' table (core/stopping.h): each row's flag name, its rule, and its place in
// MeasureSettings. The defaults a row reads are MeasureSettings' own, written in core/stopping.h and
// quoted in docs/methodology.md (2 warm-up steps, 5 to 100000 steps, 2 to 60 s, 2% noise).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/stopping.h"

namespace trainbench {
namespace {

TEST(StopSettings, EachRowNamesItsFlagAndReadsItsDefault) {
  const MeasureSettings m;
  EXPECT_EQ(stop_flag(stop_setting("min_time")), "--min-time");
  EXPECT_EQ(stop_flag(stop_setting("max_noise")), "--max-noise");
  EXPECT_DOUBLE_EQ(stop_setting("warmup").get(m), 2.0);
  EXPECT_DOUBLE_EQ(stop_setting("min_steps").get(m), 5.0);
  EXPECT_DOUBLE_EQ(stop_setting("max_steps").get(m), 100000.0);
  EXPECT_DOUBLE_EQ(stop_setting("min_time").get(m), 2.0);
  EXPECT_DOUBLE_EQ(stop_setting("max_time").get(m), 60.0);
  EXPECT_DOUBLE_EQ(stop_setting("max_noise").get(m), 2.0);  // percent, as --max-noise takes it
  EXPECT_THROW(stop_setting("min_noise"), std::logic_error);
  std::set<std::string> names;
  for (const StopSetting& s : stop_settings()) EXPECT_TRUE(names.insert(s.name).second) << s.name << " twice";
}

TEST(StopSettings, EachRowSetsWhatItReads) {
  for (const StopSetting& s : stop_settings()) {
    MeasureSettings m;
    const double v = s.rule->integer ? 7.0 : 1.25;
    s.set(m, v);
    EXPECT_DOUBLE_EQ(s.get(m), v) << s.name;
    EXPECT_EQ(stop_value_text(s, m), s.rule->integer ? "7" : "1.25") << s.name;
  }
  MeasureSettings m;
  stop_setting("max_noise").set(m, 1.5);
  EXPECT_DOUBLE_EQ(m.max_noise, 0.015);  // the policy's fraction
  EXPECT_FALSE(m.warmup_fixed);
  stop_setting("warmup").set(m, 3.0);
  EXPECT_TRUE(m.warmup_fixed);  // a warm-up given is exactly that many steps
  EXPECT_EQ(m.warmup_steps, 3);
}

TEST(StopSettings, EachMaximumNamesTheMinimumItMayNotBeBelow) {
  EXPECT_STREQ(stop_setting("max_steps").at_least, "min_steps");
  EXPECT_STREQ(stop_setting("max_time").at_least, "min_time");
  EXPECT_TRUE(stop_setting("min_steps").floor);
  EXPECT_FALSE(stop_setting("min_time").floor);  // --max-time 1 alone cuts the default 2 s
}

}  // namespace
}  // namespace trainbench
