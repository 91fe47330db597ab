#include "sim/format.h"

#include "gtest/gtest.h"

namespace npuperf::sim {
namespace {

TEST(FormatTest, Shortest3MatchesSqliteRoundThenShortest) {
  EXPECT_EQ(Shortest3(0), "0.0");
  EXPECT_EQ(Shortest3(0.21), "0.21");
  EXPECT_EQ(Shortest3(12.71649), "12.716");
  EXPECT_EQ(Shortest3(79569.0431), "79569.043");
  EXPECT_EQ(Shortest3(23.0004), "23.0");
  EXPECT_EQ(Shortest3(-0.0001), "0.0");
}

TEST(FormatTest, FixedIntegerShort) {
  EXPECT_EQ(Fixed(96.16, 3), "96.160");
  EXPECT_EQ(Fixed(6958.62, 6), "6958.620000");
  EXPECT_EQ(Integer(1193020.6), "1193021");
  EXPECT_EQ(Short3(1.92), "1.92");
  EXPECT_EQ(Short3(0), "0");
  EXPECT_EQ(Short3(100), "100");
  EXPECT_EQ(Short3(7.8071), "7.807");
}

}  // namespace
}  // namespace npuperf::sim
