#include "sim/sim_env.h"

#include <map>

#include "gtest/gtest.h"
#include "sim/report_writer.h"

namespace npuperf::sim {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](absl::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(SimEnvTest, VisibilityMapsLogicalToPhysical) {
  EXPECT_EQ(*ResolvePhysicalDevice(Env({})), 0);
  EXPECT_EQ(*ResolvePhysicalDevice(Env({{"TILE_FWK_DEVICE_ID", "5"}})), 5);
  EXPECT_EQ(*ResolvePhysicalDevice(Env({{"ASCEND_RT_VISIBLE_DEVICES", "6,7"}})), 6);
  int logical = -1;
  EXPECT_EQ(
      *ResolvePhysicalDevice(
          Env({{"ASCEND_RT_VISIBLE_DEVICES", "6, 7"}, {"TILE_FWK_DEVICE_ID", "1"}}), &logical),
      7);
  EXPECT_EQ(logical, 1);
  EXPECT_FALSE(
      ResolvePhysicalDevice(Env({{"ASCEND_RT_VISIBLE_DEVICES", "6"}, {"TILE_FWK_DEVICE_ID", "1"}}))
          .ok());
  EXPECT_FALSE(ResolvePhysicalDevice(Env({{"ASCEND_RT_VISIBLE_DEVICES", "x"}})).ok());
  EXPECT_FALSE(ResolvePhysicalDevice(Env({{"TILE_FWK_DEVICE_ID", "-1"}})).ok());
}

TEST(SimEnvTest, SocMapPicksTheDevicesSoc) {
  auto map = std::map<std::string, std::string>{
      {"MSPROF_SIM_SOC_MAP", "0-3=Ascend910B2,4-7=Ascend950PR_9589"},
      {"ASCEND_RT_VISIBLE_DEVICES", "5"}};
  auto env = ReadSimEnv(Env(map));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->physical_device, 5);
  EXPECT_EQ(env->soc, "Ascend950PR_9589");
  EXPECT_EQ(ReadSimEnv(Env({}))->soc, "Ascend910B2");
  EXPECT_FALSE(
      ReadSimEnv(Env({{"MSPROF_SIM_SOC_MAP", "0-3=Ascend910B2"}, {"TILE_FWK_DEVICE_ID", "4"}}))
          .ok());
  EXPECT_FALSE(ReadSimEnv(Env({{"MSPROF_SIM_SOC_MAP", "0-7=GPU"}})).ok());
}

TEST(SimEnvTest, SeedNoiseDvfsAndNaming) {
  auto env = ReadSimEnv(Env({{"MSPROF_SIM_SEED", "42"},
                             {"MSPROF_SIM_NOISE", "0.02"},
                             {"MSPROF_SIM_DVFS", "1200:0.5"},
                             {"MSPROF_SIM_BLOCK_NAMING", "dim"},
                             {"MSPROF_SIM_STATE_DIR", "/tmp/s"}}));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(*env->seed, 42u);
  EXPECT_DOUBLE_EQ(env->noise, 0.02);
  EXPECT_DOUBLE_EQ(env->dvfs_mhz, 1200);
  EXPECT_DOUBLE_EQ(env->dvfs_probability, 0.5);
  EXPECT_TRUE(env->block_dim_naming);
  EXPECT_EQ(env->state_dir, "/tmp/s");
  auto plain = ReadSimEnv(Env({{"TMPDIR", "/t"}}));
  EXPECT_FALSE(plain->seed.has_value());
  EXPECT_DOUBLE_EQ(plain->noise, 0.01);
  EXPECT_EQ(plain->state_dir.parent_path(), "/t");
  for (auto bad :
       std::vector<std::map<std::string, std::string>>{{{"MSPROF_SIM_SEED", "x"}},
                                                       {{"MSPROF_SIM_NOISE", "2"}},
                                                       {{"MSPROF_SIM_DVFS", "fast"}},
                                                       {{"MSPROF_SIM_DVFS", "900:2"}},
                                                       {{"MSPROF_SIM_BLOCK_NAMING", "blocks"}},
                                                       {{"MSPROF_SIM_LAYOUT", "cann6"}}}) {
    EXPECT_FALSE(ReadSimEnv(Env(bad)).ok()) << bad.begin()->first;
  }
}

TEST(SimEnvTest, LayoutPlacesAndNamesTheTables) {
  auto cann8 = ReadSimEnv(Env({{"TILE_FWK_DEVICE_ID", "3"}}));
  auto cann7 = ReadSimEnv(Env({{"TILE_FWK_DEVICE_ID", "3"}, {"MSPROF_SIM_LAYOUT", "cann7"}}));
  ASSERT_TRUE(cann8.ok() && cann7.ok());
  EXPECT_EQ(TablesDir(*cann8, "/p"), "/p/mindstudio_profiler_output");
  EXPECT_EQ(TableSuffix(*cann8, "20260601120000"), "_20260601120000");
  EXPECT_EQ(TablesDir(*cann7, "/p"), "/p/device_3/summary");
  EXPECT_EQ(TableSuffix(*cann7, "20260601120000"), "_3_1_1_20260601120000");
  auto torch = ReadSimEnv(Env({{"MSPROF_SIM_LAYOUT", "torch_npu"}}));
  ASSERT_TRUE(torch.ok());
  EXPECT_TRUE(torch->torch_npu_layout);
  EXPECT_FALSE(torch->pre8_layout);
  EXPECT_EQ(TablesDir(*torch, "/o/h_1_20260601120000000_ascend_pt/PROF_1"),
            "/o/h_1_20260601120000000_ascend_pt/ASCEND_PROFILER_OUTPUT");
  EXPECT_EQ(TableSuffix(*torch, "20260601120000"), "");
  auto cann9 = ReadSimEnv(Env({{"MSPROF_SIM_LAYOUT", "cann9"}}));
  ASSERT_TRUE(cann9.ok());
  EXPECT_TRUE(cann9->cann9_layout);
  EXPECT_EQ(TablesDir(*cann9, "/p"), "/p/mindstudio_profiler_output");
  EXPECT_EQ(Cann9TaskType(TaskType::kMixAic), "KERNEL_MIX_AIC");
  EXPECT_EQ(Cann9TaskType(TaskType::kAiVectorCore), "KERNEL_AIVEC");
}

}  // namespace
}  // namespace npuperf::sim
