// Layout edge cases built in temp dirs: sliced op_summary, 310P columns,
// several sample devices, archive of slices.
#include <SQLiteCpp/SQLiteCpp.h>

#include "evidence/archive.h"
#include "evidence/evidence.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// 310P PipeUtilization: no Mix Block Num / Context ID, unprefixed PMU columns.
constexpr char k310PHeader[] =
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
    "Task Duration(us),Task Wait Time(us),Block Num,HF32 Eligible,Input Shapes,Input Data Types,"
    "Input Formats,Output Shapes,Output Data Types,Output Formats,aicore_time(us),total_cycles,"
    "vec_time(us),vec_ratio,mac_time(us),mac_ratio,scalar_time(us),scalar_ratio,mte1_time(us),"
    "mte1_ratio,mte2_time(us),mte2_ratio,mte3_time(us),mte3_ratio,icache_miss_rate,memory_bound,"
    "cube_utilization(%)\n";

std::string Row310P(const std::string& name, const std::string& dur) {
  return "0,4294967295,1,2," + name + "," + name + ",static,AI_CORE,100.000\t," + dur +
         ",0,8,N/"
         "A,\"16,16\",FLOAT16,ND,\"16,16\",FLOAT16,ND,40.0,80000,34.0,0.85,0.0,0.0,4.0,0.1,0.0,"
         "0.0,12.0,0.3,8.0,0.2,0.01,0.35,N/A\n";
}

fs::path OutDir(const fs::path& group, const std::string& metric) {
  return group / ("PROF_" + metric) / "PROF_000001_20260101000000000_AAAAAAAAAAAAAAAA" /
         "mindstudio_profiler_output";
}

void WriteSampleDb(const fs::path& path, std::vector<int64_t> cycles) {
  fs::create_directories(path.parent_path());
  SQLite::Database db(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec(
      "CREATE TABLE AICoreOriginalData(mode INTEGER, timestamp NUMERIC, coreid INTEGER, task_cyc "
      "TEXT)");
  for (size_t c = 0; c < cycles.size(); ++c) {
    db.exec("INSERT INTO AICoreOriginalData VALUES (0, 1, " + std::to_string(c) + ", '" +
            std::to_string(cycles[c]) + "')");
  }
}

TEST(LayoutTest, SlicedOp310PSummaryAndSampleDevices) {
  testing::TempDir dir;
  fs::path g = dir.path() / "G";
  fs::path out = OutDir(g, "PipeUtilization");
  testing::WriteFile(out / "op_summary_slice_0_20260101000001.csv",
                     std::string(k310PHeader) + Row310P("noise", "5.0"));
  testing::WriteFile(out / "op_summary_slice_1_20260101000001.csv",
                     std::string(k310PHeader) + Row310P("k310", "50.0"));
  fs::path sample = g / "PROF_Sample" / "PROF_000001_20260101000002000_BBBBBBBBBBBBBBBB";
  WriteSampleDb(sample / "device_1/sqlite/aicore.db",
                {72000, 70000, 71000, 72000});  // 40us @ 1.8GHz
  WriteSampleDb(sample / "device_5/sqlite/aicore.db", {1, 2});
  BuildOptions o;
  o.op_name = "k310";
  auto ev = BuildEvidence(g, o);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_DOUBLE_EQ(ev->task_duration_us, 50.0);  // found in slice 1
  EXPECT_EQ(ev->block_num, 8);
  EXPECT_EQ(ev->mix_block_num, 0);
  EXPECT_EQ(Name(ev->bound.label), "VEC_BOUND");
  EXPECT_EQ(Name(ev->seven_metric_status), "partial");
  EXPECT_EQ(ev->metrics[0].source.filename(), "op_summary_slice_1_20260101000001.csv");
  EXPECT_EQ(ev->metrics[0].line, 2u);
  // Two devices hold a sample db: ambiguous without --device.
  EXPECT_EQ(StatusText(ev->per_core), "unavailable:ambiguous_aicore_db:2");
  o.device_id = 1;
  ev = BuildEvidence(g, o);
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(StatusText(ev->per_core), "process_scope_unattributed");
  EXPECT_EQ(ev->per_core.device_id, 1);
  EXPECT_NEAR(ev->per_core.freq_ghz, 1.8, 1e-9);
  EXPECT_EQ(StatusText(ev->per_core_secondary),
            "unavailable:no_aicore_db");  // no ai_vector_core.db
  // Slices are archived under their own names.
  fs::path ops = dir.path() / "ops";
  fs::create_directories(ops);
  auto round = ReserveRound(ops, "");
  ASSERT_TRUE(round.ok());
  auto n = WriteRound(*ev, *round, Lang::kEn);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 3);  // two slices + per_core_cycles.csv (issue 15 failure 9)
  EXPECT_TRUE(fs::exists(*round / "op_summary_PipeUtilization_slice_1.csv"));
  EXPECT_THAT(testing::ReadFile(*round / "per_core_cycles.csv"), HasSubstr("0,72000\n1,70000\n"));
}

TEST(LayoutTest, MissingSliceAndMixedExports) {
  testing::TempDir dir;
  fs::path out = OutDir(dir.path(), "PipeUtilization");
  testing::WriteFile(out / "op_summary_slice_1_20260101000001.csv", std::string(k310PHeader));
  BuildOptions o;
  o.op_name = "k";
  auto ev = BuildEvidence(dir.path(), o);
  EXPECT_THAT(ev.status().message(), HasSubstr("op_summary slice 0 missing"));
  testing::WriteFile(out / "op_summary_slice_0_20260101000001.csv", std::string(k310PHeader));
  testing::WriteFile(out / "op_summary_20260101000001.csv", std::string(k310PHeader));
  ev = BuildEvidence(dir.path(), o);
  EXPECT_THAT(ev.status().message(), HasSubstr("is both whole and sliced"));
}

TEST(LayoutTest, TwoProfDirsInOneMetricRunAreAnError) {
  testing::TempDir dir;
  fs::create_directories(dir.path() / "PROF_Memory/PROF_000001_a/mindstudio_profiler_output");
  fs::create_directories(dir.path() / "PROF_Memory/PROF_000002_b/mindstudio_profiler_output");
  BuildOptions o;
  o.op_name = "k";
  auto ev = BuildEvidence(dir.path(), o);
  EXPECT_EQ(ev.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(ev.status().message(),
              HasSubstr("metric Memory: expected exactly one PROF_* (or *_ascend_pt) in"));
}

TEST(ArchiveTest, RoundNames) {
  EXPECT_TRUE(IsValidRoundName("round_001"));
  EXPECT_TRUE(IsValidRoundName("round_1234"));
  EXPECT_FALSE(IsValidRoundName("round_"));
  EXPECT_FALSE(IsValidRoundName("round_001_old"));
  EXPECT_FALSE(IsValidRoundName("../round_001"));
  testing::TempDir dir;
  EXPECT_EQ(ReserveRound(dir.path() / "nope", "").status().code(), absl::StatusCode::kNotFound);
  fs::create_directories(dir.path() / "docs/perf/round_001_old");
  fs::create_directories(dir.path() / "docs/perf/round_002");
  auto r = ReserveRound(dir.path(), "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->filename(), "round_001");  // lowest free; "round_001_old" is not round_001
  EXPECT_EQ(ReserveRound(dir.path(), "")->filename(), "round_003");
  EXPECT_EQ(ReserveRound(dir.path(), "round_002").status().code(),
            absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace npuperf::evidence
