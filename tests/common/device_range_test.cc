#include "common/device_range.h"

#include "gtest/gtest.h"

namespace npuperf {
namespace {

TEST(DeviceRangeTest, ParsesRangesAndSingles) {
  auto ids = ParseDeviceRange("0-3,6, 5");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<int>{0, 1, 2, 3, 5, 6}));
  EXPECT_EQ(FormatDeviceRange(*ids), "0-3,5-6");
}

TEST(DeviceRangeTest, RejectsBadItemsNamingThem) {
  for (const char* bad : {"", "a", "3-1", "0,,1", "-1", "2048", "1-"}) {
    auto ids = ParseDeviceRange(bad);
    EXPECT_FALSE(ids.ok()) << bad;
  }
  EXPECT_NE(ParseDeviceRange("3-1").status().message().find("3-1"), absl::string_view::npos);
}

TEST(DeviceRangeTest, ParsesSocMap) {
  auto map = ParseDeviceMap("0-1=Ascend910B2,2=Ascend950PR_9589");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->size(), 3u);
  EXPECT_EQ(map->at(2), "Ascend950PR_9589");
  EXPECT_FALSE(ParseDeviceMap("0-1=A,1=B").ok());  // device named twice
  EXPECT_FALSE(ParseDeviceMap("0-1").ok());
}

}  // namespace
}  // namespace npuperf
