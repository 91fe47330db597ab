// What a chip reading means (common/chip_health.h): the agent withdraws and
// the server quarantines on exactly the same statuses.
#include "common/chip_health.h"

#include "gtest/gtest.h"

namespace npuperf {
namespace {

v1::DeviceReading Reading(const std::string& health, int rated = 0, int current = 0) {
  v1::DeviceReading r;
  r.set_health(health);
  r.set_error_code(health == "OK" ? "NA" : "80CB8002");
  r.set_aicore_rated_mhz(rated);
  r.set_aicore_current_mhz(current);
  return r;
}

TEST(ChipHealthTest, AlarmAndCriticalAreCriticalWarningIsNotAndUnknownTextIsUnknown) {
  EXPECT_EQ(ClassifyHealth("OK"), ChipHealth::kOk);
  EXPECT_EQ(ClassifyHealth(" ok "), ChipHealth::kOk);
  EXPECT_EQ(ClassifyHealth("Warning"), ChipHealth::kWarning);
  EXPECT_EQ(ClassifyHealth("Alarm"), ChipHealth::kCritical);
  EXPECT_EQ(ClassifyHealth("CRITICAL"), ChipHealth::kCritical);
  EXPECT_EQ(ClassifyHealth(""), ChipHealth::kUnknown);
  EXPECT_EQ(ClassifyHealth("NOT_EXIST"), ChipHealth::kUnknown);
}

TEST(ChipHealthTest, OnlyACriticalReadingHasAReasonAndItNamesStatusAndCode) {
  EXPECT_EQ(CriticalReason(Reading("OK")), "");
  EXPECT_EQ(CriticalReason(Reading("Warning")), "");
  EXPECT_EQ(CriticalReason(Reading("")), "");
  EXPECT_EQ(CriticalReason(Reading("Critical")),
            "npu-smi: Health Status Critical (error code 80CB8002)");
  v1::DeviceReading no_code = Reading("Alarm");
  no_code.clear_error_code();
  EXPECT_EQ(CriticalReason(no_code), "npu-smi: Health Status Alarm (error code none)");
}

TEST(ChipHealthTest, AClockBelowNinetyFivePercentOfRatedIsLowAndUnknownClocksAreNot) {
  EXPECT_FALSE(ClockLow(Reading("OK", 1800, 1800)));
  EXPECT_FALSE(ClockLow(Reading("OK", 1800, 1710)));  // exactly 95 %
  EXPECT_TRUE(ClockLow(Reading("OK", 1800, 1709)));
  EXPECT_TRUE(ClockLow(Reading("OK", 1800, 800)));
  EXPECT_FALSE(ClockLow(Reading("OK", 0, 800)));
  EXPECT_FALSE(ClockLow(Reading("OK", 1800, 0)));
}

}  // namespace
}  // namespace npuperf
