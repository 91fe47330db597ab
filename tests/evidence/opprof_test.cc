#include "evidence/opprof.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

TEST(OpprofTest, FlattenedVectorKernel) {
  // msprof-output.md E5: vector add, 8 blocks, 9.22 us, 1800/1800 MHz.
  auto s = ReadOpprof(testing::TestData("opprof_vector"));
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(s->basic.has_value());
  EXPECT_EQ(s->basic->op_name, "sanitized_add_custom_vector");
  EXPECT_EQ(s->basic->block_dim, 8);
  EXPECT_EQ(s->basic->mix_block_dim, 0);  // NA
  EXPECT_DOUBLE_EQ(*s->basic->current_freq_mhz, 1800);
  ASSERT_EQ(s->metrics.size(), 2u);
  EXPECT_EQ(s->metrics[0].metric, "PipeUtilization");
  EXPECT_EQ(s->metrics[0].rows, 3u);
  EXPECT_EQ(s->metrics[0].Find("aic_time(us)"), nullptr);  // NA on every vector block
  const ColumnStats* t = s->metrics[0].Find("aiv_time(us)");
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->min, 7.9);
  EXPECT_DOUBLE_EQ(t->max, 8.66);
  EXPECT_NEAR(t->avg, (8.66 + 7.9 + 8.2) / 3, 1e-12);
  EXPECT_DOUBLE_EQ(s->max_core_time_us, 8.66);
  EXPECT_EQ(s->metrics[1].metric, "MemoryUB");
  BuildOptions o;
  o.op_name = "sanitized_add_custom_vector";
  auto ev = BuildEvidence(testing::TestData("opprof_vector"), o);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->input.kind, "opprof");
  EXPECT_NEAR(ev->head_overhead_us, 9.22 - 8.66, 1e-12);
  EXPECT_EQ(Name(ev->dvfs.status), "ok");
  EXPECT_EQ(Name(ev->dvfs.source), "opprof.current_freq");
}

TEST(OpprofTest, OfficialLayoutWithDvfsDip) {
  auto s = ReadOpprof(testing::TestData("opprof_official"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->basic->op_name, "main_kernel_mix_aic");
  EXPECT_EQ(s->basic->mix_block_dim, 4);
  const ColumnStats* aic = s->metrics[0].Find("aic_time(us)");
  ASSERT_NE(aic, nullptr);
  EXPECT_EQ(aic->n, 2u);
  EXPECT_DOUBLE_EQ(aic->max, 2.9);
  EXPECT_DOUBLE_EQ(s->max_core_time_us, 6.14);
  BuildOptions o;
  o.op_name = "main_kernel_mix_aic";
  auto ev = BuildEvidence(testing::TestData("opprof_official"), o);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(Name(ev->dvfs.status), "suspect");
  EXPECT_NEAR(ev->dvfs.deviation_pct, (1200.0 - 1800) / 1800 * 100, 1e-9);
}

// Issue 31 item 5: msprof op --aic-metrics=Memory,MemoryL0 writes no
// PipeUtilization.csv; the subset is read and the rest named.
TEST(OpprofTest, AnySubsetOfGroupsIsRead) {
  testing::TempDir dir;
  const fs::path run = dir.path() / "OPPROF_20260605170804_UKAXQCBEDBJAUNQY";
  testing::WriteFile(
      run / "OpBasicInfo.csv",
      "Op Name,Op Type,Task Duration(us),Block Dim,Mix Block Dim,Device Id,Pid,"
      "Current Freq,Rated Freq,\nadd_custom,vector,9.220000,2,NA,0,1000,1800,1800,\n");
  testing::WriteFile(run / "MemoryL0.csv",
                     "block_id,sub_block_id,aic_time(us),aic_total_cycles,aiv_time(us),"
                     "aiv_total_cycles,\n0,vector0,NA,NA,7.900000,14220,\n1,vector0,NA,NA,8.600000,"
                     "15480,\n");
  auto s = ReadOpprof(dir.path());
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->metrics.size(), 1u);
  EXPECT_EQ(s->metrics[0].metric, "MemoryL0");
  EXPECT_EQ(s->missing.size(), 6u);
  EXPECT_DOUBLE_EQ(s->max_core_time_us, 8.6);
  BuildOptions o;
  o.op_name = "add_custom";
  auto ev = BuildEvidence(run, o);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_DOUBLE_EQ(ev->aiv_time_us, 8.6);
  EXPECT_EQ(Name(ev->seven_metric_status), "partial");
  bool said = false;
  for (const std::string& w : ev->warnings)
    said |= w.find("not collected: PipeUtilization, ArithmeticUtilization, Memory, MemoryUB") !=
                std::string::npos &&
            w.find("read: MemoryL0") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(OpprofTest, NoOpBasicInfoIsAnErrorNamingIt) {
  testing::TempDir dir;
  testing::WriteFile(dir.path() / "OPPROF_1/Memory.csv", "block_id,sub_block_id,\n0,vector0,\n");
  auto s = ReadOpprof(dir.path());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.status().message(), HasSubstr("OpBasicInfo.csv not found in"));
  testing::TempDir empty;
  fs::create_directories(empty.path() / "OPPROF_2");
  EXPECT_THAT(ReadOpprof(empty.path()).status().message(), HasSubstr("no msprof op output in"));
}

}  // namespace
}  // namespace npuperf::evidence
