// Chip health from the host (agent/npu_smi.h): npu-smi's two outputs as real
// drivers print them (tabs, the mcu chip's section after the NPU's, a
// missing curFreq on older drivers), and the probe end to end through the
// real subprocess runner and msprof-sim's npu-smi stand-in.
#include "agent/npu_smi.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/match.h"
#include "agent/subprocess_runner.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::agent {
namespace {

// `npu-smi info -t common -i 1` of a 910B with 20 AI Cores at full clock.
constexpr char kCommon910B[] =
    "\tNPU ID                         : 1\n"
    "\tChip Count                     : 1\n"
    "\n"
    "\tChip ID                        : 0\n"
    "\tMemory Usage Rate(%)           : 0\n"
    "\tHBM Usage Rate(%)              : 91\n"
    "\tAicore Usage Rate(%)           : 6\n"
    "\tAicore Freq(MHZ)               : 1800\n"
    "\tAicore curFreq(MHZ)            : 800\n"
    "\tAicore Count                   : 20\n"
    "\tTemperature(C)                 : 46\n"
    "\tNPU Real-time Power(W)         : 130.4\n"
    "\n"
    "\tChip Name                      : mcu\n"
    "\tTemperature(C)                 : 40\n";

TEST(NpuSmiParseTest, TheNpuChipsFiguresWinOverTheMcus) {
  v1::DeviceReading r;
  ParseCommonOutput(kCommon910B, &r);
  EXPECT_EQ(r.aicore_rated_mhz(), 1800);
  EXPECT_EQ(r.aicore_current_mhz(), 800);
  ASSERT_TRUE(r.has_temperature_c());
  EXPECT_DOUBLE_EQ(r.temperature_c(), 46) << "the NPU's, not the mcu's 40";
  ASSERT_TRUE(r.has_power_w());
  EXPECT_DOUBLE_EQ(r.power_w(), 130.4);
  EXPECT_EQ(r.problem(), "");
  EXPECT_TRUE(ClockLow(r));
}

TEST(NpuSmiParseTest, AMissingClockOrFigureIsAProblemNotAGuess) {
  v1::DeviceReading r;
  ParseCommonOutput("NPU ID : 0\nAicore Freq(MHZ) : 1650\nTemperature(C) : hot\n", &r);
  EXPECT_EQ(r.aicore_rated_mhz(), 1650);
  EXPECT_EQ(r.aicore_current_mhz(), 0);
  EXPECT_FALSE(r.has_temperature_c());
  EXPECT_FALSE(r.has_power_w());
  EXPECT_TRUE(absl::StrContains(r.problem(), "curFreq")) << r.problem();
  EXPECT_FALSE(ClockLow(r));
}

TEST(NpuSmiParseTest, HealthStatusAndErrorCodeAreRead) {
  v1::DeviceReading ok;
  ParseHealthOutput(
      "\tHealth Status                  : OK\n\tError Code                     : NA\n", &ok);
  EXPECT_EQ(ok.health(), "OK");
  EXPECT_EQ(ok.error_code(), "NA");
  v1::DeviceReading bad;
  ParseHealthOutput("Health Status : Alarm\nError Code : 80E18005 80E18006\n", &bad);
  EXPECT_EQ(bad.health(), "Alarm");
  EXPECT_EQ(CriticalReason(bad), "npu-smi: Health Status Alarm (error code 80E18005 80E18006)");
  v1::DeviceReading none;
  ParseHealthOutput("Error parameter of -i\n", &none);
  EXPECT_EQ(none.health(), "");
  EXPECT_TRUE(absl::StrContains(none.problem(), "no Health Status"));
}

class NpuSmiProbeTest : public ::testing::Test {
 protected:
  NpuSmiProbeTest() {
    ::setenv("MSPROF_SIM_SOC_MAP", "0-7=Ascend910B2", 1);
    ::setenv("MSPROF_SIM_STATE_DIR", (dir_.path() / "state").c_str(), 1);
  }
  ~NpuSmiProbeTest() override {
    for (const char* name : {"NPU_SMI_SIM_FAULT", "MSPROF_SIM_SOC_MAP", "MSPROF_SIM_STATE_DIR"}) {
      ::unsetenv(name);
    }
  }

  RealClock clock_;
  SubprocessRunner runner_{clock_};
  testing::TempDir dir_;
  NpuSmiProbe probe_{runner_, clock_, NPUPERF_SIM_BIN_DIR "/npu-smi", dir_.path() / "scratch"};
};

TEST_F(NpuSmiProbeTest, ReadsTheStandInsHealthyAndCriticalChips) {
  ::setenv("NPU_SMI_SIM_FAULT", "critical@dev=2;lowclock:700@dev=3", 1);
  const v1::DeviceReading healthy = probe_.Read(0);
  EXPECT_EQ(healthy.health(), "OK") << healthy.problem();
  EXPECT_GT(healthy.aicore_rated_mhz(), 0);
  EXPECT_EQ(healthy.aicore_current_mhz(), healthy.aicore_rated_mhz());
  EXPECT_TRUE(healthy.has_temperature_c());
  EXPECT_EQ(healthy.problem(), "");
  EXPECT_NE(CriticalReason(probe_.Read(2)), "");
  const v1::DeviceReading slow = probe_.Read(3);
  EXPECT_EQ(slow.aicore_current_mhz(), 700);
  EXPECT_TRUE(ClockLow(slow));
}

TEST_F(NpuSmiProbeTest, AFailingOrMissingNpuSmiIsAProblemNeverACrash) {
  const v1::DeviceReading unknown_device = probe_.Read(42);
  EXPECT_EQ(unknown_device.health(), "");
  EXPECT_FALSE(unknown_device.problem().empty());
  EXPECT_LE(unknown_device.problem().size(), 255u);
  NpuSmiProbe missing(runner_, clock_, (dir_.path() / "no-such-npu-smi").string(),
                      dir_.path() / "scratch");
  EXPECT_FALSE(missing.Read(0).problem().empty());
  NpuSmiProbe off(runner_, clock_, "", dir_.path() / "scratch");
  EXPECT_FALSE(off.enabled());
  EXPECT_EQ(off.Read(0).problem(), "no --npu-smi");
}

TEST_F(NpuSmiProbeTest, ACachedReadingIsReusedUntilItIsTooOld) {
  ::setenv("NPU_SMI_SIM_FAULT", "critical@dev=1@after=1", 1);
  EXPECT_EQ(probe_.ReadCached(1, std::chrono::hours(1)).health(), "OK");
  EXPECT_EQ(probe_.ReadCached(1, std::chrono::hours(1)).health(), "OK") << "cached";
  EXPECT_EQ(probe_.ReadCached(1, std::chrono::milliseconds(0)).health(), "Critical");
}

}  // namespace
}  // namespace npuperf::agent
