#include "sim/pmu_columns.h"

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "sim/soc.h"

namespace npuperf::sim {
namespace {

struct Golden {
  SocFamily family;
  MetricGroup group;
  const char* header;
};

// Copied from the op_summary headers msprof documents for A2/A3 and A5 (CANN 8.x/9.x);
// the A5 L2Cache "..." is expanded symmetrically to the AIC block.
const Golden kGolden[] = {
    {SocFamily::kA2A3, MetricGroup::kPipeUtilization,
     "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),aic_sc"
     "alar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_t"
     "ime(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time("
     "us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,ai"
     "v_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)"},
    {SocFamily::kA2A3, MetricGroup::kArithmeticUtilization,
     "aicore_time(us),aic_total_cycles,aic_mac_fp16_ratio,aic_mac_int8_ratio,aic_cube_fops,aiv_t"
     "ime(us),aiv_total_cycles,aiv_vec_fp32_ratio,aiv_vec_fp16_ratio,aiv_vec_int32_ratio,aiv_vec"
     "_misc_ratio,aiv_vector_fops"},
    {SocFamily::kA2A3, MetricGroup::kMemory,
     "aicore_time(us),aic_total_cycles,aic_l1_read_bw(GB/s),aic_l1_write_bw(GB/s),aic_main_mem_r"
     "ead_bw(GB/s),aic_main_mem_write_bw(GB/s),aic_l2_read_bw(GB/s),aic_l2_write_bw(GB/s),aiv_ti"
     "me(us),aiv_total_cycles,aiv_ub_read_bw(GB/s),aiv_ub_write_bw(GB/s),aiv_main_mem_read_bw(GB"
     "/s),aiv_main_mem_write_bw(GB/s),aiv_l2_read_bw(GB/s),aiv_l2_write_bw(GB/s)"},
    {SocFamily::kA2A3, MetricGroup::kMemoryL0,
     "aicore_time(us),aic_total_cycles,aic_l0a_read_bw(GB/s),aic_l0a_write_bw(GB/s),aic_l0b_read"
     "_bw(GB/s),aic_l0b_write_bw(GB/s),aic_l0c_read_bw_cube(GB/s),aic_l0c_write_bw_cube(GB/s),ai"
     "v_time(us),aiv_total_cycles,aiv_l0c_read_bw(GB/s),aiv_l0c_write_bw(GB/s)"},
    {SocFamily::kA2A3, MetricGroup::kMemoryUB,
     "aicore_time(us),aic_total_cycles,aic_ub_read_bw_scalar(GB/s),aic_ub_write_bw_scalar(GB/s),"
     "aiv_time(us),aiv_total_cycles,aiv_ub_read_bw_vector(GB/s),aiv_ub_write_bw_vector(GB/s),aiv"
     "_ub_read_bw_scalar(GB/s),aiv_ub_write_bw_scalar(GB/s)"},
    {SocFamily::kA2A3, MetricGroup::kL2Cache,
     "aicore_time(us),aic_total_cycles,aic_write_cache_hit,aic_write_cache_miss_allocate,aic_r0_"
     "read_cache_hit,aic_r0_read_cache_miss_allocate,aic_r1_read_cache_hit,aic_r1_read_cache_mis"
     "s_allocate,aiv_time(us),aiv_total_cycles,aiv_write_cache_hit,aiv_write_cache_miss_allocate"
     ",aiv_r0_read_cache_hit,aiv_r0_read_cache_miss_allocate,aiv_r1_read_cache_hit,aiv_r1_read_c"
     "ache_miss_allocate"},
    {SocFamily::kA2A3, MetricGroup::kResourceConflictRatio,
     "aicore_time(us),aic_total_cycles,aiv_time(us),aiv_total_cycles,aiv_vec_bankgroup_cflt_rati"
     "o,aiv_vec_bank_cflt_ratio,aiv_vec_resc_cflt_ratio"},
    {SocFamily::kA5, MetricGroup::kPipeUtilization,
     "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),aic_sc"
     "alar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,aic_mte3_time"
     "(us),aic_mte3_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(u"
     "s),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,ai"
     "v_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_"
     "utilization(%)"},
    {SocFamily::kA5, MetricGroup::kArithmeticUtilization,
     "aicore_time(us),aic_total_cycles,aic_mac_fp16_ratio,aic_mac_int8_ratio,aic_cube_fops,aiv_t"
     "ime(us),aiv_total_cycles"},
    {SocFamily::kA5, MetricGroup::kMemory,
     "aicore_time(us),aic_total_cycles,aic_l1_read_bw(GB/s),aic_l1_write_bw(GB/s),"
     "aic_main_mem_read_bw(GB/s),aic_main_mem_write_bw(GB/s),aiv_time(us),aiv_total_cycles,"
     "aiv_ub_read_bw(GB/s),aiv_ub_write_bw(GB/s),aiv_main_mem_read_bw(GB/s),"
     "aiv_main_mem_write_bw(GB/s)"},
    {SocFamily::kA5, MetricGroup::kMemoryL0,
     "aicore_time(us),aic_total_cycles,aic_l0a_read_bw(GB/s),aic_l0a_write_bw(GB/s),aic_l0b_read"
     "_bw(GB/s),aic_l0b_write_bw(GB/s),aic_l0c_read_bw_cube(GB/s),aic_l0c_write_bw_cube(GB/s),ai"
     "v_time(us),aiv_total_cycles,aiv_l0c_read_bw(GB/s)"},
    {SocFamily::kA5, MetricGroup::kMemoryUB,
     "aicore_time(us),aic_total_cycles,aic_ub_read_bw_scalar(GB/s),aic_ub_write_bw_scalar(GB/s),"
     "aic_fixp2ub_write_bw(GB/s),aiv_time(us),aiv_total_cycles,aiv_ub_read_bw_vector(GB/s),aiv_u"
     "b_write_bw_vector(GB/s),aiv_ub_read_bw_scalar(GB/s),aiv_ub_write_bw_scalar(GB/s),aiv_fixp2"
     "ub_write_bw(GB/s)"},
    {SocFamily::kA5, MetricGroup::kL2Cache,
     "aicore_time(us),aic_total_cycles,aic_read_local_l2_hit,aic_read_local_l2_miss,aic_read_loc"
     "al_l2_victim,aic_write_local_l2_hit,aic_write_local_l2_miss,aic_write_local_l2_victim,aiv_"
     "time(us),aiv_total_cycles,aiv_read_local_l2_hit,aiv_read_local_l2_miss,aiv_read_local_l2_v"
     "ictim,aiv_write_local_l2_hit,aiv_write_local_l2_miss,aiv_write_local_l2_victim"},
    {SocFamily::kA5, MetricGroup::kResourceConflictRatio,
     "aicore_time(us),aic_total_cycles,aiv_time(us),aiv_total_cycles,aiv_vec_bank_cflt_ratio,aiv"
     "_vec_resc_cflt_ratio"},
};

TEST(PmuColumnsTest, HeadersMatchReferencePerFamilyAndGroup) {
  for (const Golden& g : kGolden) {
    EXPECT_EQ(absl::StrJoin(PmuHeader(g.group, g.family), ","), g.header)
        << MetricGroupName(g.group) << (g.family == SocFamily::kA5 ? " A5" : " A2/A3");
  }
}

TEST(PmuColumnsTest, MemoryAccessIsA2A3Only) {
  auto a2 = FindSoc("Ascend910B2");
  auto a3 = FindSoc("Ascend910_9392");
  auto a5 = FindSoc("Ascend950PR_9589");
  ASSERT_TRUE(a2.ok() && a3.ok() && a5.ok());
  EXPECT_TRUE(CheckGroupSupported(MetricGroup::kMemoryAccess, *a2).ok());
  EXPECT_TRUE(CheckGroupSupported(MetricGroup::kMemoryAccess, *a3).ok());
  EXPECT_FALSE(CheckGroupSupported(MetricGroup::kMemoryAccess, *a5).ok());
  EXPECT_EQ(a2->family, SocFamily::kA2A3);
  EXPECT_EQ(a3->family, SocFamily::kA2A3);
  EXPECT_EQ(a5->family, SocFamily::kA5);
  EXPECT_EQ(a5->cube_cores, 32);
  EXPECT_EQ(a5->vector_cores, 64);
  EXPECT_EQ(a5->freq_mhz, 1650);
  std::vector<std::string> h = PmuHeader(MetricGroup::kMemoryAccess, SocFamily::kA2A3);
  ASSERT_EQ(h.size(), 18u);
  EXPECT_EQ(h[2], "aic_read_main_memory_datas(KB)");
  EXPECT_EQ(h[17], "aiv_UB_to_GM_datas(KB)");
}

TEST(PmuColumnsTest, EveryHeaderColumnResolves) {
  for (SocFamily f : {SocFamily::kA2A3, SocFamily::kA5}) {
    for (MetricGroup g :
         {MetricGroup::kPipeUtilization, MetricGroup::kArithmeticUtilization, MetricGroup::kMemory,
          MetricGroup::kMemoryL0, MetricGroup::kMemoryUB, MetricGroup::kResourceConflictRatio,
          MetricGroup::kL2Cache, MetricGroup::kMemoryAccess}) {
      for (const std::string& name : PmuHeader(g, f)) {
        EXPECT_TRUE(ResolvePmuColumn(name).ok()) << name;
      }
    }
  }
  EXPECT_FALSE(ResolvePmuColumn("aic_warp_ratio").ok());
  EXPECT_FALSE(ResolvePmuColumn("mac_ratio").ok());
}

TEST(PmuColumnsTest, GroupNamesRoundTrip) {
  for (const char* name : {"PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0",
                           "MemoryUB", "ResourceConflictRatio", "L2Cache", "MemoryAccess"}) {
    auto g = ParseMetricGroup(name);
    ASSERT_TRUE(g.ok()) << name;
    EXPECT_EQ(MetricGroupName(*g), name);
  }
  EXPECT_FALSE(ParseMetricGroup("pipeutilization").ok());
}

TEST(PmuColumnsTest, CoreTimeFollowsMsprofFormula) {
  // Real check from msprof-output.md §3.7: 532700 / 1800 / 256 * ceil(256 / 24) = 12.716.
  CoreStats c;
  c.blocks = 256;
  c.cores = 24;
  c.total_cycles = 532700;
  EXPECT_NEAR(CoreTimeUs(c, 1800), 12.716, 5e-4);
  c.blocks = 512;
  c.cores = 48;
  c.total_cycles = 6666439114;
  EXPECT_NEAR(CoreTimeUs(c, 1800), 79569.04, 0.01);
}

}  // namespace
}  // namespace npuperf::sim
