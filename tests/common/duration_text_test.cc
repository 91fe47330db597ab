#include "common/duration_text.h"

#include "gtest/gtest.h"

namespace npuperf {
namespace {

using std::chrono::milliseconds;

TEST(DurationTextTest, EachUnit) {
  EXPECT_EQ(*ParseDurationText("250ms"), milliseconds(250));
  EXPECT_EQ(*ParseDurationText("90s"), milliseconds(90'000));
  EXPECT_EQ(*ParseDurationText("5m"), milliseconds(300'000));
  EXPECT_EQ(*ParseDurationText("36h"), milliseconds(36 * 3'600'000LL));
  EXPECT_EQ(*ParseDurationText("7d"), milliseconds(7 * 86'400'000LL));
}

TEST(DurationTextTest, AnythingElseIsInvalid) {
  for (const char* bad : {"", "7", "d", "0s", "-5s", "+5s", "1.5h", "5 s", "5w", "5sm",
                          "99999999999999999d", "9223372036854775807s"}) {
    auto got = ParseDurationText(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(got.status())) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace npuperf
