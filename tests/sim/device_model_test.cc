#include "sim/device_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "sim/pmu_columns.h"

namespace npuperf::sim {
namespace {

SocSpec Soc(const char* name = "Ascend910B2") { return *FindSoc(name); }

Launch Vector(int blocks, double bytes, double vec) {
  Launch l;
  l.op_name = "v";
  l.op_type = "v";
  l.task_type = TaskType::kAiVectorCore;
  l.block_num = blocks;
  l.work.gm_to_ub = bytes;
  l.work.ub_to_gm = bytes / 2;
  l.work.vec_fp16 = vec;
  l.work.scalar = 1000;
  return l;
}

Launch Mix() {
  Launch l = Vector(24, 1 << 24, 1 << 26);
  l.task_type = TaskType::kMixAic;
  l.mix_block_num = 48;
  l.work.cube_fp16 = 1e10;
  l.work.gm_to_l1 = 1 << 26;
  l.work.l0c_to_gm = 1 << 24;
  return l;
}

// Parses the formatted PipeUtilization cells of one task into name -> value.
std::map<std::string, std::string> Cells(const KernelResult& r, SocFamily family) {
  std::vector<PmuColumn> cols;
  for (const std::string& n : PmuHeader(MetricGroup::kPipeUtilization, family))
    cols.push_back(*ResolvePmuColumn(n));
  std::string line;
  AppendPmuCells(cols, r, 1800, line);
  std::vector<std::string> cells = absl::StrSplit(line.substr(1), ',');
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < cols.size(); ++i) out[cols[i].name] = cells[i];
  return out;
}

TEST(DeviceModelTest, RatiosAreFractionsAndTimesAreRatioTimesCoreTime) {
  DeviceModel model(Soc(), 0.01);
  Rng rng(1);
  for (const Launch& l : {Vector(48, 1 << 26, 1 << 24), Vector(7, 1 << 10, 1 << 28), Mix()}) {
    KernelResult r = model.Run(l, 1800, rng);
    std::map<std::string, std::string> c = Cells(r, SocFamily::kA2A3);
    for (const char* side : {"aic", "aiv"}) {
      double core = std::stod(c[std::string(side) == "aic" ? "aicore_time(us)" : "aiv_time(us)"]);
      for (const char* pipe : {"mac", "scalar", "mte1", "mte2", "fixpipe", "vec", "mte3"}) {
        std::string ratio_col = std::string(side) + "_" + pipe + "_ratio";
        if (!c.count(ratio_col)) continue;
        double ratio = std::stod(c[ratio_col]);
        double time = std::stod(c[std::string(side) + "_" + pipe + "_time(us)"]);
        EXPECT_GE(ratio, 0);
        EXPECT_LE(ratio, 1) << ratio_col;
        EXPECT_NEAR(ratio * core, time, 0.0005 * core + 0.001) << ratio_col;
      }
    }
  }
}

TEST(DeviceModelTest, CoreTimeIsCyclesAtTheClockUsed) {
  DeviceModel model(Soc(), 0.0);
  Launch l = Vector(30, 0, 1 << 26);  // compute only: cycles do not depend on the clock
  Rng a(5), b(5);
  KernelResult fast = model.Run(l, 1800, a);
  KernelResult slow = model.Run(l, 900, b);
  EXPECT_DOUBLE_EQ(fast.aiv.total_cycles, slow.aiv.total_cycles);
  double t_fast = CoreTimeUs(fast.aiv, fast.freq_mhz);
  EXPECT_NEAR(t_fast, fast.aiv.total_cycles / 1800.0 / 30 * 1, 1e-9);
  EXPECT_NEAR(CoreTimeUs(slow.aiv, slow.freq_mhz), 2 * t_fast, 1e-9);
  EXPECT_GT(slow.duration_us, 1.9 * (fast.duration_us - 1.0));
  // cube_utilization uses the rated clock, so a DVFS dip lowers it.
  Launch cube = Mix();
  Rng c(5), d(5);
  auto util = [](const KernelResult& r) {
    return std::stod(Cells(r, SocFamily::kA2A3)["cube_utilization(%)"]);
  };
  EXPECT_LT(util(model.Run(cube, 900, d)), util(model.Run(cube, 1800, c)));
}

TEST(DeviceModelTest, PartialLastWaveLeavesCoresIdle) {
  DeviceModel model(Soc(), 0.0);
  Rng rng(1);
  KernelResult one_wave = model.Run(Vector(48, 0, 1 << 24), 1800, rng);
  KernelResult two_waves = model.Run(Vector(49, 0, 49.0 / 48 * (1 << 24)), 1800, rng);
  EXPECT_NEAR(two_waves.aiv.makespan_cycles, 2 * one_wave.aiv.makespan_cycles,
              0.01 * one_wave.aiv.makespan_cycles);
  int busy_twice = std::count_if(two_waves.aiv.core_cycles.begin(), two_waves.aiv.core_cycles.end(),
                                 [&](double c) { return c > 1.5 * one_wave.aiv.makespan_cycles; });
  EXPECT_EQ(busy_twice, 1);
}

TEST(DeviceModelTest, DurationCoversTheReportedCoreTime) {
  DeviceModel model(Soc(), 0.01);
  Rng rng(4);
  for (int blocks : {1, 7, 48, 49, 97, 500}) {
    Launch l = Vector(blocks, 1 << 22, 1 << 24);
    l.work.skew = 0.6;
    KernelResult r = model.Run(l, 1800, rng);
    EXPECT_GT(r.duration_us, CoreTimeUs(r.aiv, 1800)) << blocks;
  }
}

TEST(DeviceModelTest, SkewCreatesPerCoreImbalance) {
  DeviceModel model(Soc(), 0.0);
  Rng rng(3);
  Launch l = Vector(48, 1 << 20, 1 << 26);
  l.work.skew = 0.5;
  KernelResult r = model.Run(l, 1800, rng);
  double mean = std::accumulate(r.aiv.core_cycles.begin(), r.aiv.core_cycles.end(), 0.0) / 48;
  EXPECT_GT(r.aiv.makespan_cycles / mean, 1.2);
  EXPECT_GT(r.duration_us, CoreTimeUs(r.aiv, 1800) * 1.15);
}

TEST(DeviceModelTest, DeterministicPerSeedAndNoiseWithinBounds) {
  DeviceModel model(Soc(), 0.01);
  Launch l = Vector(48, 1 << 24, 1 << 24);
  Rng a(9), b(9), c(10);
  EXPECT_EQ(model.Run(l, 1800, a).duration_us, model.Run(l, 1800, b).duration_us);
  EXPECT_NE(model.Run(l, 1800, a).duration_us, model.Run(l, 1800, c).duration_us);
  std::vector<double> d;
  Rng rng(11);
  for (int i = 0; i < 2000; ++i) d.push_back(model.Run(l, 1800, rng).duration_us);
  double mean = std::accumulate(d.begin(), d.end(), 0.0) / d.size();
  double var = 0;
  for (double x : d) var += (x - mean) * (x - mean) / d.size();
  EXPECT_GT(std::sqrt(var) / mean, 0.005);
  EXPECT_LT(std::sqrt(var) / mean, 0.02);
  DeviceModel quiet(Soc(), 0.0);
  Rng e(1), f(2);
  EXPECT_EQ(quiet.Run(l, 1800, e).duration_us, quiet.Run(l, 1800, f).duration_us);
}

TEST(DeviceModelTest, BoundProfilesFollowTheWorkload) {
  DeviceModel model(Soc(), 0.0);
  Rng rng(1);
  auto max_pipe = [](const CoreStats& c) {
    return static_cast<int>(std::max_element(c.pipe.begin(), c.pipe.end()) - c.pipe.begin());
  };
  EXPECT_EQ(max_pipe(model.Run(Vector(48, 1e9, 1e6), 1800, rng).aiv), kPipeMte2);
  EXPECT_EQ(max_pipe(model.Run(Vector(48, 1e6, 1e10), 1800, rng).aiv), kPipeVec);
  Launch scalar = Vector(8, 1e4, 1e4);
  scalar.work.scalar = 1e8;
  EXPECT_EQ(max_pipe(model.Run(scalar, 1800, rng).aiv), kPipeScalar);
  Launch cube = Mix();
  cube.task_type = TaskType::kAiCore;
  cube.work = Workload();
  cube.work.cube_fp16 = 1e12;
  cube.work.gm_to_l1 = 1e8;
  EXPECT_EQ(max_pipe(model.Run(cube, 1800, rng).aic), kPipeMac);
  // Twice the bytes of a memory-bound kernel take about twice as long.
  double t1 = model.Run(Vector(48, 1e9, 1e6), 1800, rng).duration_us;
  double t2 = model.Run(Vector(48, 2e9, 1e6), 1800, rng).duration_us;
  EXPECT_NEAR(t2 / t1, 2.0, 0.05);
}

TEST(DeviceModelTest, CheckRejectsWorkOnTheWrongCoreType) {
  DeviceModel model(Soc(), 0.0);
  Launch l = Vector(4, 1, 1);
  l.task_type = TaskType::kAiCore;
  EXPECT_FALSE(model.Check(l).ok());
  Launch v = Vector(4, 1, 1);
  v.work.cube_fp16 = 1;
  EXPECT_FALSE(model.Check(v).ok());
  EXPECT_TRUE(model.Check(Mix()).ok());
}

TEST(DeviceModelTest, AiCpuTasksHaveNoPmu) {
  DeviceModel model(Soc(), 0.0);
  Rng rng(1);
  Launch l;
  l.op_name = "Sort";
  l.task_type = TaskType::kAiCpu;
  l.work.scalar = 1e6;
  KernelResult r = model.Run(l, 1800, rng);
  EXPECT_FALSE(r.has_pmu);
  EXPECT_GT(r.duration_us, 18);
  EXPECT_EQ(Cells(r, SocFamily::kA2A3)["aiv_vec_ratio"], "N/A");
}

TEST(DeviceModelTest, A5HasMoreCoresAndItsOwnColumns) {
  DeviceModel a5(Soc("Ascend950PR_9589"), 0.0);
  Rng rng(1);
  KernelResult r = a5.Run(Mix(), 1650, rng);
  EXPECT_EQ(r.aic.cores, 32);
  EXPECT_EQ(r.aiv.cores, 64);
  EXPECT_TRUE(Cells(r, SocFamily::kA5).count("aic_mte3_ratio"));
}

}  // namespace
}  // namespace npuperf::sim
