// npu-smi-sim (sim/npu_smi_sim.h): npu-smi's two queries in npu-smi's format,
// the SoC's rated clock, and the faults a device-health test needs.
#include "sim/npu_smi_sim.h"

#include <filesystem>
#include <map>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::sim {
namespace {

struct Ran {
  int code = 0;
  std::string out;
  std::string err;
};

class NpuSmiSimTest : public ::testing::Test {
 protected:
  Ran Run(const std::vector<std::string>& args) {
    EnvLookup env = [this](absl::string_view name) -> std::optional<std::string> {
      auto it = env_.find(std::string(name));
      if (it == env_.end()) return std::nullopt;
      return it->second;
    };
    std::ostringstream out, err;
    Ran r;
    r.code = RunNpuSmi(args, env, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
  }
  Ran Health(int device) { return Run({"info", "-t", "health", "-i", std::to_string(device)}); }
  Ran Common(int device) { return Run({"info", "-t", "common", "-i", std::to_string(device)}); }

  testing::TempDir state_;
  std::map<std::string, std::string> env_ = {
      {"MSPROF_SIM_SOC_MAP", "0-3=Ascend910B2,4-7=Ascend950PR_9589"},
      {"MSPROF_SIM_STATE_DIR", state_.path().string()}};
};

TEST_F(NpuSmiSimTest, AHealthyChipSaysOkAndItsSocsRatedClock) {
  const Ran h = Health(0);
  EXPECT_EQ(h.code, 0) << h.err;
  EXPECT_TRUE(absl::StrContains(h.out, "Health Status                  : OK")) << h.out;
  const Ran c = Common(5);
  EXPECT_EQ(c.code, 0) << c.err;
  EXPECT_TRUE(absl::StrContains(c.out, "NPU ID                         : 5")) << c.out;
  EXPECT_TRUE(absl::StrContains(c.out, "Aicore Freq(MHZ)")) << c.out;
  EXPECT_TRUE(absl::StrContains(c.out, "Chip Name                      : mcu")) << c.out;
  EXPECT_EQ(Common(5).out, c.out) << "two queries of one device agree";
}

TEST_F(NpuSmiSimTest, FaultsAreLimitedToTheirDevice) {
  env_["NPU_SMI_SIM_FAULT"] = "warning@dev=1;critical@dev=2;lowclock:800@dev=3";
  EXPECT_TRUE(absl::StrContains(Health(0).out, ": OK"));
  EXPECT_TRUE(absl::StrContains(Health(1).out, ": Warning"));
  EXPECT_TRUE(absl::StrContains(Health(2).out, ": Critical"));
  EXPECT_TRUE(absl::StrContains(Health(2).out, "80CB8002"));
  EXPECT_TRUE(absl::StrContains(Common(3).out, "Aicore curFreq(MHZ)            : 800"));
  EXPECT_FALSE(absl::StrContains(Common(0).out, ": 800\n"));
}

TEST_F(NpuSmiSimTest, AChipGoesCriticalAfterItsHealthyQueries) {
  env_["NPU_SMI_SIM_FAULT"] = "critical@dev=1@after=2";
  EXPECT_TRUE(absl::StrContains(Health(1).out, ": OK"));
  EXPECT_TRUE(absl::StrContains(Health(1).out, ": OK"));
  EXPECT_TRUE(absl::StrContains(Health(1).out, ": Critical"));
  EXPECT_TRUE(absl::StrContains(Health(1).out, ": Critical"));
  EXPECT_TRUE(absl::StrContains(Health(0).out, ": OK")) << "other devices count apart";
}

TEST_F(NpuSmiSimTest, BadCommandsDevicesAndFaultsExitOneWithAMessage) {
  EXPECT_EQ(Run({"info"}).code, 1);
  EXPECT_EQ(Run({"info", "-t", "board", "-i", "0"}).code, 1);
  EXPECT_EQ(Run({"info", "-t", "health", "-i", "x"}).code, 1);
  EXPECT_EQ(Health(9).code, 1) << "the SoC map names no device 9";
  env_["NPU_SMI_SIM_FAULT"] = "melted";
  const Ran bad = Health(0);
  EXPECT_EQ(bad.code, 1);
  EXPECT_TRUE(absl::StrContains(bad.err, "NPU_SMI_SIM_FAULT item 'melted'")) << bad.err;
  EXPECT_FALSE(ParseNpuSmiFaults("lowclock:0").ok());
  EXPECT_FALSE(ParseNpuSmiFaults("warning@after=3").ok()) << "@after belongs to critical";
  EXPECT_TRUE(ParseNpuSmiFaults(" warning ; critical@dev=2@after=1 ").ok());
}

}  // namespace
}  // namespace npuperf::sim
