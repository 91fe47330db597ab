#include "evidence/statistic.h"

#include "evidence/prof_layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

using ::testing::HasSubstr;

TEST(StatisticTest, ApiStatisticRealRows) {
  auto dir = testing::TestData(
      "quick_mix/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output");
  auto parts = FindCsvParts(dir, "api_statistic");
  ASSERT_TRUE(parts.ok());
  auto rows = ReadApiStatistic(*parts);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  // msprof-output.md E8: host,runtime,KernelLaunch,165.79,3,55.263,15.88,130.55,2836.059
  const ApiStatisticRow& k = (*rows)[0];
  EXPECT_EQ(k.level, "runtime");
  EXPECT_EQ(k.api_name, "KernelLaunch");
  EXPECT_EQ(k.count, 3);
  EXPECT_DOUBLE_EQ(k.time_us, 165.79);
  EXPECT_DOUBLE_EQ(k.avg_us, 55.263);
  EXPECT_DOUBLE_EQ(k.max_us, 130.55);
  EXPECT_DOUBLE_EQ(k.variance, 2836.059);
}

TEST(StatisticTest, OpStatisticOlderHeaderAndErrors) {
  testing::TempDir dir;
  // Older export: no Device_id column.
  testing::WriteFile(
      dir.path() / "op_statistic_20260101000000.csv",
      "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),"
      "Ratio(%)\nmain_kernel,MIX_AIC,3,260794.52,86808.42,86931.506,87139.38,100\n");
  auto rows = ReadOpStatistic({dir.path() / "op_statistic_20260101000000.csv"});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].count, 3);
  EXPECT_DOUBLE_EQ((*rows)[0].avg_us, 86931.506);
  EXPECT_DOUBLE_EQ((*rows)[0].ratio_pct, 100);
  testing::WriteFile(dir.path() / "bad.csv", "OP Type,Core Type\nx,y\n");
  EXPECT_THAT(ReadOpStatistic({dir.path() / "bad.csv"}).status().message(),
              HasSubstr("no 'Count' column"));
}

}  // namespace
}  // namespace npuperf::evidence
