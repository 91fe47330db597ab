#include "sim/exporter.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "SQLiteCpp/SQLiteCpp.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace npuperf::sim {
namespace {

namespace fs = std::filesystem;

class ExporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    in_.soc = *FindSoc("Ascend910B2");
    in_.ts14 = "20261130120000";
    in_.process_start_ns = 1'780'000'000'000'000'000;
    in_.process_end_ns = in_.process_start_ns + 250'000'000;
    in_.seed = 42;
    in_.options.app = {"app"};
    launches_ = {Make("StatelessNormal", 48, 3), Make("_Z6targetv", 20, 1),
                 Make("aclnnAdd_AddAiCore_Add", 48, 2)};
  }

  static Launch Make(const std::string& name, int blocks, int count) {
    Launch l;
    l.op_name = l.op_type = name;
    l.block_num = blocks;
    l.count = count;
    l.in_shapes = "16,4096;16,4096";
    l.in_dtypes = "DT_FLOAT16;DT_FLOAT16";
    l.in_formats = "ND;ND";
    l.work.gm_to_ub = 1 << 22;
    l.work.ub_to_gm = 1 << 21;
    l.work.vec_fp16 = 1 << 22;
    l.work.scalar = 5000;
    return l;
  }

  fs::path Export(const std::string& name) {
    in_.prof_dir = root_ / name;
    auto s = ExportProfile(in_, launches_);
    EXPECT_TRUE(s.ok()) << s.status();
    if (s.ok()) summary_ = *s;
    return in_.prof_dir / "mindstudio_profiler_output";
  }

  static std::string Read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // CSV rows; commas inside "..." do not split (shapes are quoted).
  static std::vector<std::vector<std::string>> Rows(const fs::path& p) {
    std::vector<std::vector<std::string>> rows;
    for (absl::string_view line : absl::StrSplit(Read(p), '\n', absl::SkipEmpty())) {
      std::vector<std::string> cells(1);
      bool quoted = false;
      for (char c : line) {
        if (c == '"') quoted = !quoted;
        if (c == ',' && !quoted)
          cells.emplace_back();
        else
          cells.back() += c;
      }
      rows.push_back(cells);
    }
    return rows;
  }

  fs::path root_;
  ExportInput in_;
  std::vector<Launch> launches_;
  ExportSummary summary_;
};

TEST_F(ExporterTest, SameSeedSameBytesOtherSeedOtherNumbers) {
  auto a = Read(Export("a") / "op_summary_20261130120000.csv");
  auto b = Read(Export("b") / "op_summary_20261130120000.csv");
  EXPECT_EQ(a, b);
  in_.seed = 43;
  EXPECT_NE(a, Read(Export("c") / "op_summary_20261130120000.csv"));
}

TEST_F(ExporterTest, OpSummaryCellQuirks) {
  auto rows = Rows(Export("q") / "op_summary_20261130120000.csv");
  ASSERT_EQ(rows.size(), 7u);  // header + 3 + 1 + 2
  EXPECT_EQ(rows[0][11], "Block Num");
  EXPECT_EQ(rows[0].back(), "cube_utilization(%)");
  const auto& first = rows[1];
  EXPECT_EQ(first[1], "4294967295");
  EXPECT_TRUE(absl::EndsWith(first[8], "\t"));
  EXPECT_EQ(first[10], "0");
  EXPECT_EQ(first[14], "\"16,4096;16,4096\"");  // shapes arrive quoted
  EXPECT_EQ(first[20], "N/A");                  // Context ID of a non-MIX task
  for (size_t i = 2; i < rows.size(); ++i) {
    size_t dot = rows[i][10].find('.');
    ASSERT_NE(dot, std::string::npos);
    EXPECT_EQ(rows[i][10].size() - dot - 1, 6u) << rows[i][10];
    EXPECT_EQ(rows[i][9].size() - rows[i][9].find('.') - 1, 3u);
  }
  EXPECT_EQ(rows[4][4], "_Z6targetv");
}

TEST_F(ExporterTest, UnifiedDbHasTasksAndTheClock) {
  in_.faults = *ParseFaults("dvfs:1000");
  Export("db");
  SQLite::Database db((in_.prof_dir / "msprof_20261130120000.db").string());
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM TASK").getInt(), 6);
  EXPECT_EQ(db.execAndGet("SELECT value FROM META_DATA WHERE name='SCHEMA_VERSION'").getString(),
            "1.2.0");
  // The rated clock at the session start, the DVFS dip from the first task on.
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM AICORE_FREQ").getInt(), 2);
  EXPECT_EQ(db.execAndGet("SELECT freq FROM AICORE_FREQ ORDER BY timestampNs LIMIT 1").getInt(),
            1800);
  EXPECT_EQ(db.execAndGet("SELECT freq FROM AICORE_FREQ WHERE timestampNs = "
                          "(SELECT MIN(startNs) FROM TASK)")
                .getInt(),
            1000);
  EXPECT_EQ(
      db.execAndGet("SELECT s.value FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s ON s.id = c.name "
                    "WHERE c.globalTaskId = 3")
          .getString(),
      "_Z6targetv");
  EXPECT_EQ(db.execAndGet("SELECT name FROM NPU_INFO").getString(), "Ascend910B");
}

// PyPTO's kernel (issue 31): op_summary PYPTO_<op>, 3 rows per launch with its
// Stream/Task ID and N/A PMU cells; task_time and the db tilefwk_<n>_mix_aic,
// one row per launch with the same ids.
TEST_F(ExporterTest, PyptoKernelIsNamedTwiceAndJoinsByIds) {
  auto p = ParseLaunchLine(
      "launch op=mul_kernel_2d task=MIX_AIC blocks=24 mix=48 count=2 pypto=0 gm_to_ub=4194304 "
      "ub_to_gm=2097152 vec_fp16=4194304 scalar=5000");
  ASSERT_TRUE(p.ok()) << p.status();
  launches_ = {Make("Cast", 48, 1), *p};
  in_.env.cann9_layout = true;
  fs::path out = Export("pypto");
  auto op = Rows(out / "op_summary_20261130120000.csv");
  ASSERT_EQ(op.size(), 1u + 1 + 2 * kPyptoRows);
  auto col = [&](const std::string& name) {
    auto it = std::find(op[0].begin(), op[0].end(), name);
    EXPECT_NE(it, op[0].end()) << name;
    return static_cast<size_t>(it - op[0].begin());
  };
  const size_t name = col("Op Name"), task = col("Task ID"), stream = col("Stream ID"),
               dur = col("Task Duration(us)"), ctx = col("Context ID"), type = col("Task Type");
  ASSERT_GT(op[0].size(), ctx + 1);  // PMU columns follow Context ID
  std::vector<double> launch_us(2, 0.0);
  for (size_t r = 2; r < op.size(); ++r) {
    const auto& row = op[r];
    const size_t k = (r - 2) % kPyptoRows, launch = (r - 2) / kPyptoRows;
    EXPECT_EQ(row[name], "PYPTO_mul_kernel_2d");
    EXPECT_EQ(row[col("OP Type")], "PYPTO_mul_kernel_2d");
    EXPECT_EQ(row[type], "MIX_AIC");
    EXPECT_EQ(row[ctx], std::to_string(k));
    EXPECT_EQ(row[task], op[2 + launch * kPyptoRows][task]) << "rows of one launch share ids";
    EXPECT_EQ(row[stream], op[2 + launch * kPyptoRows][stream]);
    for (size_t c = ctx + 1; c < row.size(); ++c) EXPECT_EQ(row[c], "N/A") << op[0][c];
    launch_us[launch] += std::stod(row[dur]);
  }
  EXPECT_NE(op[2][task], op[5][task]);
  auto tt = Rows(out / "task_time_20261130120000.csv");
  ASSERT_EQ(tt.size(), 1u + 2 + 1 + 2);
  for (size_t launch = 0; launch < 2; ++launch) {
    const auto& row = tt[4 + launch];
    EXPECT_EQ(row[1], "tilefwk_0_mix_aic");
    EXPECT_EQ(row[2], "KERNEL_MIX_AIC");
    EXPECT_EQ(row[3], op[2 + launch * kPyptoRows][stream]);
    EXPECT_EQ(row[4], op[2 + launch * kPyptoRows][task]);
    // task_time spans the three rows plus its 0.78 us lead and 0.42 us tail.
    EXPECT_NEAR(std::stod(row[5]), launch_us[launch] + 1.2, 1e-6);
  }
  auto stat = Rows(out / "op_statistic_20261130120000.csv");
  bool stat_row = false;
  for (const auto& r : stat) stat_row |= r[1] == "PYPTO_mul_kernel_2d" && r[3] == "6";
  EXPECT_TRUE(stat_row);
  SQLite::Database db((in_.prof_dir / "msprof_20261130120000.db").string());
  SQLite::Statement q(db,
                      "SELECT n.value, o.value, k.value, t.streamId, t.taskId, "
                      "(SELECT COUNT(*) FROM TASK_PMU_INFO p WHERE p.globalTaskId = c.globalTaskId)"
                      " FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId "
                      "JOIN STRING_IDS n ON n.id = c.name JOIN STRING_IDS o ON o.id = c.opType "
                      "JOIN STRING_IDS k ON k.id = t.taskType ORDER BY t.startNs");
  std::vector<std::string> names;
  while (q.executeStep()) {
    names.push_back(q.getColumn(0).getString());
    if (names.back() == "Cast") {
      EXPECT_GT(q.getColumn(5).getInt(), 0);
      continue;
    }
    const size_t launch = names.size() - 2;
    EXPECT_EQ(q.getColumn(1).getString(), "tilefwk_0_mix_aic");
    EXPECT_EQ(q.getColumn(2).getString(), "KERNEL_MIX_AIC");
    EXPECT_EQ(std::to_string(q.getColumn(3).getInt()), op[2 + launch * kPyptoRows][stream]);
    EXPECT_EQ(std::to_string(q.getColumn(4).getInt()), op[2 + launch * kPyptoRows][task]);
    EXPECT_EQ(q.getColumn(5).getInt(), 0) << "N/A cells have no TASK_PMU_INFO row";
  }
  EXPECT_EQ(names, (std::vector<std::string>{"Cast", "tilefwk_0_mix_aic", "tilefwk_0_mix_aic"}));
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM STRING_IDS WHERE value LIKE 'PYPTO%'").getInt(), 0);
}

TEST_F(ExporterTest, BlockDimNamingSwitch) {
  in_.env.block_dim_naming = true;
  auto rows = Rows(Export("dim") / "op_summary_20261130120000.csv");
  EXPECT_EQ(rows[0][11], "Block Dim");
  EXPECT_EQ(rows[0][12], "Mix Block Dim");
}

TEST_F(ExporterTest, TaskTimeStatisticsAndApi) {
  fs::path out = Export("s");
  auto tt = Rows(out / "task_time_20261130120000.csv");
  EXPECT_EQ(tt[0][0], "Device_id");
  EXPECT_EQ(tt[1][2], "PROFILING_ENABLE");
  EXPECT_EQ(tt.size(), 1u + 2 + 6);
  EXPECT_TRUE(absl::EndsWith(tt[3][6], "\t"));
  auto stat = Rows(out / "op_statistic_20261130120000.csv");
  ASSERT_EQ(stat.size(), 4u);
  double ratio = 0;
  for (size_t i = 1; i < stat.size(); ++i) ratio += std::stod(stat[i][8]);
  EXPECT_NEAR(ratio, 100, 0.01);
  EXPECT_GE(std::stod(stat[1][4]), std::stod(stat[2][4]));
  auto api = Rows(out / "api_statistic_20261130120000.csv");
  bool launch_row = false;
  for (const auto& r : api)
    launch_row |= r[1] == "node" && r[2] == "launch" && r[4] == "6" && r[0] == "host";
  EXPECT_TRUE(launch_row);
}

// torch_npu's export: kernel_details.csv is op_summary under torch_npu's
// names (Step Id for Device_id), the same cells from column 1 on.
TEST_F(ExporterTest, TorchNpuLayoutWritesKernelDetails) {
  auto plain = Rows(Export("plain") / "op_summary_20261130120000.csv");
  in_.env.torch_npu_layout = true;
  const fs::path pt = root_ / "host_1_20261130120000000_ascend_pt";
  in_.prof_dir = pt / "PROF_000001_20261130120000000_AAAAAAAAAAAAAAAA";
  fs::create_directories(in_.prof_dir);  // Simulator::CreateTree's part
  auto s = ExportProfile(in_, launches_);
  ASSERT_TRUE(s.ok()) << s.status();
  const fs::path out = pt / "ASCEND_PROFILER_OUTPUT";
  auto kd = Rows(out / "kernel_details.csv");
  ASSERT_EQ(kd.size(), plain.size());
  EXPECT_EQ(absl::StrJoin(std::vector<std::string>(kd[0].begin(), kd[0].begin() + 13), ","),
            "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start "
            "Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim");
  for (size_t i = 1; i < kd.size(); ++i) {
    EXPECT_EQ(kd[i][0], "1");
    EXPECT_EQ(std::vector<std::string>(kd[i].begin() + 1, kd[i].end()),
              std::vector<std::string>(plain[i].begin() + 1, plain[i].end()));
  }
  EXPECT_FALSE(fs::exists(out / "task_time.csv"));
  EXPECT_EQ(Rows(out / "op_statistic.csv")[0][0], "OP Type");
  EXPECT_EQ(Rows(out / "api_statistic.csv")[0][0], "Level");
  EXPECT_NE(
      Read(pt / "profiler_info_0.json").find("\"_aic_metrics\": \"ACL_AICORE_PIPE_UTILIZATION\""),
      std::string::npos);
}

// msprof op: the target's launch with the figures op_summary has for it.
TEST_F(ExporterTest, OpprofHasTheTargetLaunchOfOpSummary) {
  auto plain = Rows(Export("plain") / "op_summary_20261130120000.csv");
  in_.options.op_mode = true;
  in_.options.kernel_name = "_Z6targetv";
  in_.options.op_groups = {MetricGroup::kPipeUtilization, MetricGroup::kMemory};
  in_.prof_dir = root_ / "OPPROF_20261130120000_AAAAAAAAAAAAAAAA";
  auto s = ExportOpprof(in_, launches_);
  ASSERT_TRUE(s.ok()) << s.status();
  auto basic = Rows(in_.prof_dir / "OpBasicInfo.csv");
  ASSERT_EQ(basic.size(), 2u);
  EXPECT_EQ(basic[0][7], "Current Freq");
  const auto& target = plain[4];  // header, 3 StatelessNormal, then the target
  ASSERT_EQ(target[4], "_Z6targetv");
  EXPECT_EQ(basic[1][0], "_Z6targetv");
  EXPECT_EQ(basic[1][1], "vector");
  EXPECT_NEAR(std::stod(basic[1][2]), std::stod(target[9]), 0.0005);
  EXPECT_EQ(basic[1][3], "20");
  EXPECT_EQ(basic[1][4], "NA");
  EXPECT_EQ(basic[1][7], "1800");
  EXPECT_EQ(basic[1][8], "1800");
  EXPECT_TRUE(absl::EndsWith(Read(in_.prof_dir / "OpBasicInfo.csv"), ",\n"));
  auto pipe = Rows(in_.prof_dir / "PipeUtilization.csv");
  ASSERT_EQ(pipe.size(), 21u);  // header + 20 blocks
  EXPECT_TRUE(fs::exists(in_.prof_dir / "Memory.csv"));
  EXPECT_FALSE(fs::exists(in_.prof_dir / "L2Cache.csv"));
  size_t aiv = 0, aic = 0;
  for (size_t c = 0; c < pipe[0].size(); ++c) {
    if (pipe[0][c] == "aiv_time(us)") aiv = c;
    if (pipe[0][c] == "aicore_time(us)" || pipe[0][c] == "aic_time(us)") aic = c;
  }
  ASSERT_GT(aiv, 1u);
  double sum = 0;
  for (size_t r = 1; r < pipe.size(); ++r) {
    EXPECT_EQ(pipe[r][1], "vector0");
    if (aic > 0) {
      EXPECT_EQ(pipe[r][aic], "NA");
    }
    sum += std::stod(pipe[r][aiv]);
  }
  size_t op_aiv = 0;
  for (size_t c = 0; c < plain[0].size(); ++c) {
    if (plain[0][c] == "aiv_time(us)") op_aiv = c;
  }
  ASSERT_GT(op_aiv, 0u);
  EXPECT_NEAR(sum / 20, std::stod(target[op_aiv]), 0.0006);
  in_.options.kernel_name = "absent";
  EXPECT_EQ(ExportOpprof(in_, launches_).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ExporterTest, TaskTimeLevelsAndAscendcl) {
  in_.options.task_time = TaskTimeLevel::kL0;
  in_.options.ai_core = false;
  in_.options.ascendcl = false;
  fs::path out = Export("l0");
  auto rows = Rows(out / "op_summary_20261130120000.csv");
  EXPECT_EQ(rows[0].back(), "Context ID");
  EXPECT_EQ(rows[1][5], "N/A");
  EXPECT_EQ(rows[1][11], "0");
  EXPECT_FALSE(fs::exists(out / "op_statistic_20261130120000.csv"));
  EXPECT_FALSE(fs::exists(out / "api_statistic_20261130120000.csv"));
  EXPECT_TRUE(fs::exists(out / "task_time_20261130120000.csv"));
  in_.options.task_time = TaskTimeLevel::kOff;
  out = Export("off");
  EXPECT_FALSE(fs::exists(out / "op_summary_20261130120000.csv"));
  EXPECT_FALSE(fs::exists(out / "task_time_20261130120000.csv"));
}

TEST_F(ExporterTest, SampleBasedCoversTheProcessOnEveryCore) {
  in_.options.mode = AicMode::kSampleBased;
  fs::path out = Export("sample");
  auto rows = Rows(out / "op_summary_20261130120000.csv");
  EXPECT_EQ(rows[0].back(), "Context ID");
  SQLite::Database db((in_.prof_dir / "device_0" / "sqlite" / "ai_vector_core.db").string());
  int slices = 25;  // 250 ms at 100 Hz
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM AICoreOriginalData").getInt(), slices * 48);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(DISTINCT coreid) FROM AICoreOriginalData").getInt(), 48);
  EXPECT_GT(
      db.execAndGet("SELECT SUM(task_cyc) FROM AICoreOriginalData WHERE task_cyc>0").getInt64(), 0);
  EXPECT_EQ(summary_.samples, slices * (24 + 48));
  EXPECT_TRUE(fs::exists(in_.prof_dir / "device_0" / "sqlite" / "aicore.db"));
  EXPECT_TRUE(fs::exists(out / "ai_vector_core_utilization_20261130120000.csv"));
}

TEST_F(ExporterTest, FaultsShapeTheOutput) {
  in_.faults = *ParseFaults("truncate;garbage;ratio_gt1:_Z6targetv;dvfs:900");
  fs::path out = Export("faults");
  std::string text = Read(out / "op_summary_20261130120000.csv");
  EXPECT_NE(text.back(), '\n');
  EXPECT_NE(text.find("GARBAGE"), std::string::npos);
  EXPECT_EQ(summary_.freq_mhz, 900);
  auto rows = Rows(out / "op_summary_20261130120000.csv");
  size_t mte2 = 0;
  for (size_t i = 0; i < rows[0].size(); ++i)
    if (rows[0][i] == "aiv_mte2_ratio") mte2 = i;
  bool above = false;
  for (const auto& r : rows)
    above |= r.size() > mte2 && r[4] == "_Z6targetv" && std::stod(r[mte2]) > 1;
  EXPECT_TRUE(above);
  in_.options.mode = AicMode::kSampleBased;
  in_.faults = *ParseFaults("no_aicore_db");
  Export("nodb");
  EXPECT_FALSE(fs::exists(in_.prof_dir / "device_0" / "sqlite" / "aicore.db"));
}

TEST_F(ExporterTest, DvfsDipShowsInCyclesVersusCoreTime) {
  in_.faults = *ParseFaults("dvfs:900");
  auto rows = Rows(Export("dvfs") / "op_summary_20261130120000.csv");
  size_t t = 0, c = 0;
  for (size_t i = 0; i < rows[0].size(); ++i) {
    if (rows[0][i] == "aiv_time(us)") t = i;
    if (rows[0][i] == "aiv_total_cycles") c = i;
  }
  // StatelessNormal: 48 blocks on 48 cores, one wave: cycles / blocks / time = MHz.
  double implied = std::stod(rows[1][c]) / 48 / std::stod(rows[1][t]);
  EXPECT_NEAR(implied, 900, 2);
}

}  // namespace
}  // namespace npuperf::sim

namespace npuperf::sim {
namespace {

// slow:<factor> stretches durations at the rated clock: the implied clock
// (cycles over core time) stays rated, so the DVFS check does not fire, and
// the same seed's task takes factor times as long.
TEST_F(ExporterTest, SlowDeviceStretchesDurationsAtTheRatedClock) {
  auto column = [](const std::vector<std::vector<std::string>>& rows, const std::string& name) {
    for (size_t i = 0; i < rows[0].size(); ++i) {
      if (rows[0][i] == name) return i;
    }
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  auto plain = Rows(Export("plain") / "op_summary_20261130120000.csv");
  in_.faults = *ParseFaults("slow:1.25");
  auto slow = Rows(Export("slow") / "op_summary_20261130120000.csv");
  const size_t d = column(plain, "Task Duration(us)"), t = column(plain, "aiv_time(us)"),
               c = column(plain, "aiv_total_cycles");
  EXPECT_NEAR(std::stod(slow[1][d]) / std::stod(plain[1][d]), 1.25, 0.01);
  const double implied = std::stod(slow[1][c]) / 48 / std::stod(slow[1][t]);
  EXPECT_NEAR(implied, in_.soc.freq_mhz, 0.02 * in_.soc.freq_mhz);
}

}  // namespace
}  // namespace npuperf::sim
