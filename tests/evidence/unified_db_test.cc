// The unified msprof_<ts>.db as a source (unified_db.h, db_evidence.h): the
// same capture read from CSV and from the db gives the same evidence; a CANN 9
// level0 op_summary is filled from the db; AICORE_FREQ drives the DVFS check;
// discovery resolves N/A task types. The db is written here with msprof's
// schema (msprof-output.md §5.4), strings interned in STRING_IDS.
#include "evidence/unified_db.h"

#include <map>
#include <string>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>

#include "evidence/discovery.h"
#include "evidence/evidence.h"
#include "evidence/kernel_names.h"
#include "evidence/layout.h"
#include "evidence/task_time.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kStartNs = 1778059616768656843;  // 1778059616768656.843 us

// One compute task of the test capture.
struct Task {
  std::string name, compute_type, task_type, op_type;
  int64_t start_ns = 0, end_ns = 0;
  int stream = 0, task = 0;
  int64_t block = 0;
  std::vector<std::pair<std::string, double>> pmu;  // db names
};

class DbWriter {
 public:
  explicit DbWriter(const fs::path& p)
      : db_(p.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {
    db_.exec("CREATE TABLE STRING_IDS(id INTEGER PRIMARY KEY, value TEXT)");
    db_.exec("CREATE TABLE META_DATA(name TEXT, value TEXT)");
    db_.exec("CREATE TABLE NPU_INFO(id INTEGER, name TEXT)");
    db_.exec("CREATE TABLE AICORE_FREQ(deviceId INTEGER, timestampNs NUMERIC, freq INTEGER)");
    db_.exec(
        "CREATE TABLE TASK(startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId "
        "INTEGER, globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, "
        "streamId INTEGER, taskId INTEGER, modelId INTEGER)");
    db_.exec(
        "CREATE TABLE COMPUTE_TASK_INFO(name INTEGER, globalTaskId INTEGER, blockNum INTEGER, "
        "mixBlockNum INTEGER, taskType INTEGER, opType INTEGER, inputFormats INTEGER, "
        "inputDataTypes INTEGER, inputShapes INTEGER, outputFormats INTEGER, outputDataTypes "
        "INTEGER, outputShapes INTEGER, attrInfo INTEGER, opState INTEGER, hf32Eligible INTEGER, "
        "gridDim INTEGER, blockDim INTEGER)");
    db_.exec("CREATE TABLE TASK_PMU_INFO(globalTaskId INTEGER, name INTEGER, value NUMERIC)");
    db_.exec("INSERT INTO META_DATA VALUES('SCHEMA_VERSION','1.2.0')");
    db_.exec("INSERT INTO NPU_INFO VALUES(0,'Ascend910B')");
    db_.exec("BEGIN");
  }
  ~DbWriter() { db_.exec("COMMIT"); }
  int64_t Id(const std::string& s) {
    auto [it, fresh] = ids_.emplace(s, static_cast<int64_t>(ids_.size()));
    if (fresh) {
      SQLite::Statement q(db_, "INSERT INTO STRING_IDS VALUES(?,?)");
      q.bind(1, it->second);
      q.bind(2, s);
      q.exec();
    }
    return it->second;
  }
  void Add(const Task& t) {
    int64_t g = next_++;
    SQLite::Statement q(db_, "INSERT INTO TASK VALUES(?,?,0,0,?,1,?,0,?,?,4294967295)");
    q.bind(1, t.start_ns);
    q.bind(2, t.end_ns);
    q.bind(3, g);
    q.bind(4, Id(t.task_type));
    q.bind(5, t.stream);
    q.bind(6, t.task);
    q.exec();
    SQLite::Statement c(db_,
                        "INSERT INTO COMPUTE_TASK_INFO VALUES(?,?,?,0,?,?,?,?,?,?,?,?,?,?,?,0,0)");
    std::vector<int64_t> v = {Id(t.name),    g,           t.block,      Id(t.compute_type),
                              Id(t.op_type), Id("ND"),    Id("FLOAT"),  Id("8,1024"),
                              Id("ND"),      Id("FLOAT"), Id("8,1024"), Id("N/A"),
                              Id("dynamic"), Id("NO")};
    for (size_t i = 0; i < v.size(); ++i) c.bind(static_cast<int>(i + 1), v[i]);
    c.exec();
    for (const auto& [name, value] : t.pmu) {
      SQLite::Statement p(db_, "INSERT INTO TASK_PMU_INFO VALUES(?,?,?)");
      p.bind(1, g);
      p.bind(2, Id(name));
      p.bind(3, value);
      p.exec();
    }
  }
  void Freq(int64_t ts, int mhz) {
    db_.exec("INSERT INTO AICORE_FREQ VALUES(0," + std::to_string(ts) + "," + std::to_string(mhz) +
             ")");
  }

 private:
  SQLite::Database db_;
  std::map<std::string, int64_t> ids_;
  int64_t next_ = 0;
};

// The target: an AIV kernel of 8 blocks, 9.220 us, aiv_time 8.0 us at 1800 MHz.
Task Target(int64_t start_ns, int task_id) {
  return Task{"add_custom",
              "AI_VECTOR_CORE",
              "KERNEL_AIVEC",
              "add_custom",
              start_ns,
              start_ns + 9220,
              2,
              task_id,
              8,
              {{"aic_total_time", 0},
               {"aic_total_cycles", 0},
               {"aiv_total_time", 8.0},
               {"aiv_total_cycles", 115200},
               {"aiv_vec_time", 0.48},
               {"aiv_vec_ratio", 0.06},
               {"aiv_scalar_time", 7.76},
               {"aiv_scalar_ratio", 0.97},
               {"aiv_mte2_time", 4.0},
               {"aiv_mte2_ratio", 0.5},
               {"aiv_mte3_time", 2.64},
               {"aiv_mte3_ratio", 0.33}}};
}

constexpr char kHeader[] =
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
    "Task Duration(us),Task Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,Input Shapes,"
    "Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,"
    "aicore_time(us),aic_total_cycles,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),"
    "aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,"
    "aiv_mte3_time(us),aiv_mte3_ratio\n";

// The target's op_summary row as level1 (or CANN 9 level0) writes it.
std::string Row(bool level0) {
  if (level0) {
    return "0,4294967295,0,2,add_custom,N/A,N/A,N/A,1778059616768656.843\t,9.220,0,0,0,N/A,N/A,"
           "N/A,N/A,N/A,N/A,N/A,N/A,0.0,0,0.0,115200,0.0,0.06,0.0,0.97,0.0,0.5,0.0,0.33\n";
  }
  return "0,4294967295,0,2,add_custom,add_custom,dynamic,AI_VECTOR_CORE,1778059616768656.843\t,"
         "9.220,0,8,0,NO,\"8,1024\",FLOAT,ND,\"8,1024\",FLOAT,ND,N/A,0,0,8.0,115200,0.48,0.06,"
         "7.76,0.97,4.0,0.5,2.64,0.33\n";
}

fs::path RunDir(const fs::path& root) {
  return root / "PROF_000001_20260101000000000_ABCDEFGHIJKLMNOP";
}

void WriteCsv(const fs::path& root, bool level0) {
  testing::WriteFile(RunDir(root) / "mindstudio_profiler_output" / "op_summary_20260101000001.csv",
                     std::string(kHeader) + Row(level0));
}

void WriteDb(const fs::path& root, bool freq_drop) {
  fs::create_directories(RunDir(root));
  DbWriter w(RunDir(root) / "msprof_20260101000001.db");
  w.Add(Target(kStartNs, 0));
  Task cast{
      "Cast", "AI_VECTOR_CORE", "KERNEL_AIVEC", "Cast", kStartNs - 50000, kStartNs - 48000, 2, 7, 1,
      {}};
  w.Add(cast);
  w.Freq(kStartNs - 1000000, 1800);
  if (freq_drop) w.Freq(kStartNs + 4000, 800);
}

BuildOptions Opts() {
  BuildOptions o;
  o.op_name = "add_custom";
  o.soc = "Ascend910B2";
  return o;
}

TEST(UnifiedDb, ExactTimestampsParseAsFixedPoint) {
  EXPECT_EQ(ParseMicrosAsNs("1778059616768656.843\t"), kStartNs);
  EXPECT_EQ(FormatNsAsMicros(kStartNs), "1778059616768656.843");
  EXPECT_EQ(ParseMicrosAsNs("12.5"), 12500);
  EXPECT_EQ(ParseMicrosAsNs("7"), 7000);
  EXPECT_EQ(ParseMicrosAsNs("1.2345"), std::nullopt);
  for (const char* bad : {"", "N/A", "-1.0", "1e3", "1.2.3", "99999999999999999.0"})
    EXPECT_EQ(ParseMicrosAsNs(bad), std::nullopt) << bad;
  // Two starts 1 ns apart stay ordered (a double holds this value in 0.25 us steps).
  std::vector<LaunchInfo> l(2);
  l[0].start_ns = kStartNs + 1;
  l[0].start_us = 1778059616768656.843;
  l[1].start_ns = kStartNs;
  l[1].start_us = 1778059616768656.843;
  std::vector<size_t> perm = OrderLaunches(&l);
  EXPECT_EQ(perm, (std::vector<size_t>{1, 0}));
}

TEST(UnifiedDb, MetricNamesFollowMsprofRenaming) {
  EXPECT_EQ(OpSummaryNameOfDbMetric("aic_total_time"), "aicore_time(us)");
  EXPECT_EQ(OpSummaryNameOfDbMetric("aiv_total_time"), "aiv_time(us)");
  EXPECT_EQ(OpSummaryNameOfDbMetric("aiv_mte2_time"), "aiv_mte2_time(us)");
  EXPECT_EQ(OpSummaryNameOfDbMetric("aic_l1_read_bw"), "aic_l1_read_bw(GB/s)");
  EXPECT_EQ(OpSummaryNameOfDbMetric("GM_to_UB_datas"), "GM_to_UB_datas(KB)");
  EXPECT_EQ(OpSummaryNameOfDbMetric("aic_cube_ratio"), "aic_mac_ratio");
  EXPECT_EQ(OpSummaryNameOfDbMetric("aiv_total_cycles"), "aiv_total_cycles");
  EXPECT_EQ(NormalizeTaskType("KERNEL_MIX_AIC"), "MIX_AIC");
  EXPECT_TRUE(IsUnifiedDbName("msprof_20260101000001.db"));
  EXPECT_FALSE(IsUnifiedDbName("aicore.db"));
}

TEST(UnifiedDb, DbOnlyRunIsASource) {
  testing::TempDir t;
  WriteDb(t.path(), /*freq_drop=*/false);
  absl::StatusOr<Evidence> ev = BuildEvidence(t.path(), Opts());
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->task_type, "AI_VECTOR_CORE");
  EXPECT_EQ(ev->block_num, 8);
  EXPECT_DOUBLE_EQ(ev->task_duration_us, 9.22);
  EXPECT_DOUBLE_EQ(ev->aiv_time_us, 8.0);
  EXPECT_EQ(ev->duration.source, TimingSource::kMsprofDb);
  ASSERT_EQ(ev->launch.used.size(), 1u);
  EXPECT_EQ(ev->launch.used[0].start_ns, kStartNs);
  EXPECT_EQ(ev->bound.primary_core, CoreType::kAiv);
  EXPECT_NE(ev->sources["pmu"].find("TASK_PMU_INFO"), std::string::npos);
  EXPECT_EQ(ev->dvfs.source, ClockSource::kMsprofDbAicoreFreq);
  EXPECT_EQ(ev->dvfs.status, DvfsStatus::kOk);
}

TEST(UnifiedDb, QuickModeReadsADbOnlyRun) {
  testing::TempDir t;
  WriteDb(t.path(), /*freq_drop=*/false);
  absl::StatusOr<KernelTiming> k = ReadQuickTiming(t.path(), "add_custom");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->source, TimingSource::kMsprofDb);
  EXPECT_EQ(k->kernel_type, "AI_VECTOR_CORE");
  EXPECT_EQ(k->launches_us, std::vector<double>{9.22});
  k = ReadQuickTiming(t.path(), "");  // Cast is incidental: add_custom is picked
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->kernel_name, "add_custom");
}

TEST(UnifiedDb, CsvAndDbGiveTheSameEvidence) {
  testing::TempDir csv, db;
  WriteCsv(csv.path(), /*level0=*/false);
  WriteDb(db.path(), /*freq_drop=*/false);
  absl::StatusOr<Evidence> a = BuildEvidence(csv.path(), Opts());
  absl::StatusOr<Evidence> b = BuildEvidence(db.path(), Opts());
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->op_type, b->op_type);
  EXPECT_EQ(a->task_type, b->task_type);
  EXPECT_EQ(a->block_num, b->block_num);
  EXPECT_EQ(a->input_shapes, b->input_shapes);
  EXPECT_EQ(a->duration.samples_us, b->duration.samples_us);
  EXPECT_EQ(a->launch.used[0].start_ns, b->launch.used[0].start_ns);
  EXPECT_EQ(a->merged, b->merged);
  EXPECT_EQ(a->bound.label, b->bound.label);
  EXPECT_EQ(a->bound.routing_label, b->bound.routing_label);
  EXPECT_EQ(a->head_overhead_us, b->head_overhead_us);
}

TEST(UnifiedDb, Level0CsvIsFilledFromTheDb) {
  testing::TempDir t;
  WriteCsv(t.path(), /*level0=*/true);
  WriteDb(t.path(), /*freq_drop=*/true);
  absl::StatusOr<Evidence> ev = BuildEvidence(t.path(), Opts());
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->task_type, "AI_VECTOR_CORE");
  EXPECT_EQ(ev->op_type, "add_custom");
  EXPECT_EQ(ev->block_num, 8);
  EXPECT_DOUBLE_EQ(ev->aiv_time_us, 8.0);
  EXPECT_EQ(ev->duration.source, TimingSource::kOpSummary);
  EXPECT_EQ(ev->bound.primary_core, CoreType::kAiv);
  EXPECT_NE(ev->bound.routing_label, RoutingLabel::kInsufficientEvidence);
  EXPECT_NE(ev->sources["identity"].find("N/A cells from msprof_db"), std::string::npos);
  EXPECT_NE(ev->sources["pmu"].find("cells from msprof_db"), std::string::npos);
  // AICORE_FREQ drops to 800 MHz inside the launch: a measured DVFS fault.
  ASSERT_TRUE(ev->db_clock.has_value());
  EXPECT_EQ(ev->db_clock->min_mhz, 800);
  EXPECT_EQ(ev->db_clock->max_mhz, 1800);
  EXPECT_EQ(ev->dvfs.status, DvfsStatus::kSuspect);
  EXPECT_EQ(ev->dvfs.source, ClockSource::kMsprofDbAicoreFreq);
}

TEST(UnifiedDb, Level0CsvWithoutDbStaysHonest) {
  testing::TempDir t;
  WriteCsv(t.path(), /*level0=*/true);
  absl::StatusOr<Evidence> ev = BuildEvidence(t.path(), Opts());
  ASSERT_TRUE(ev.ok()) << ev.status();
  // Block Num is 0: the cycles cannot give a core time; no 100 % head overhead.
  EXPECT_EQ(ev->aiv_time_us, 0);
  EXPECT_EQ(ev->head_overhead_status, HeadOverheadStatus::kNotApplicable);
  bool said = false;
  for (const std::string& w : ev->warnings)
    said |= w.find("Block Num is unknown") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(UnifiedDb, DiscoveryReadsTheDbAndResolvesN_ATypes) {
  testing::TempDir db;
  WriteDb(db.path(), false);
  absl::StatusOr<Discovery> d = DiscoverCandidates(db.path());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->candidates.size(), 2u);
  absl::StatusOr<OpCandidate> pick = PickAutoCandidate(d->candidates, d->source);
  ASSERT_TRUE(pick.ok()) << pick.status();
  EXPECT_EQ(pick->op_name, "add_custom");
  EXPECT_EQ(pick->task_type, "AI_VECTOR_CORE");
  ASSERT_EQ(pick->launches.size(), 1u);
  EXPECT_EQ(pick->launches[0].start_ns, kStartNs);

  testing::TempDir l0;  // level0 op_summary + task_time with PyPTO's second name
  WriteCsv(l0.path(), true);
  testing::WriteFile(
      RunDir(l0.path()) / "mindstudio_profiler_output" / "task_time_20260101000001.csv",
      "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),"
      "task_start(us),task_stop(us)\n"
      "0,tilefwk_0_mix_aic,KERNEL_MIX_AIC,2,0,9.220,1778059616768656.843\t,"
      "1778059616768666.063\t\n");
  d = DiscoverCandidates(l0.path());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->candidates.size(), 1u);
  EXPECT_EQ(d->candidates[0].task_type, "MIX_AIC");
  EXPECT_EQ(d->candidates[0].incidental, "");
  bool named = false;
  for (const std::string& n : d->notes) named |= n.find("tilefwk_0_mix_aic") != std::string::npos;
  EXPECT_TRUE(named);
}

// Discovery merges TASK and COMPUTE_TASK_INFO in storage order when both are in globalTaskId
// order (msprof's dbs have no index to join on); a db out of that order is joined by SQLite, and
// both give the same candidates.
TEST(UnifiedDb, DiscoveryIsTheSameWhateverOrderTheTablesAreStoredIn) {
  testing::TempDir ordered, shuffled;
  WriteDb(ordered.path(), false);
  WriteDb(shuffled.path(), false);
  {
    SQLite::Database db((RunDir(shuffled.path()) / "msprof_20260101000001.db").string(),
                        SQLite::OPEN_READWRITE);
    db.exec(
        "CREATE TABLE T2 AS SELECT * FROM TASK ORDER BY globalTaskId DESC; DROP TABLE TASK; "
        "ALTER TABLE T2 RENAME TO TASK");
  }
  absl::StatusOr<Discovery> a = DiscoverCandidates(ordered.path());
  absl::StatusOr<Discovery> b = DiscoverCandidates(shuffled.path());
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->candidates.size(), 2u);
  ASSERT_EQ(b->candidates.size(), a->candidates.size());
  for (size_t i = 0; i < a->candidates.size(); ++i) {
    const OpCandidate &x = a->candidates[i], &y = b->candidates[i];
    EXPECT_EQ(x.op_name, y.op_name);
    EXPECT_EQ(x.task_type, y.task_type);
    EXPECT_EQ(x.count, y.count);
    EXPECT_EQ(x.total_duration_us, y.total_duration_us);
    ASSERT_EQ(x.launches.size(), y.launches.size());
    for (size_t k = 0; k < x.launches.size(); ++k) {
      EXPECT_EQ(x.launches[k].start_ns, y.launches[k].start_ns);
      EXPECT_EQ(x.launches[k].task_id, y.launches[k].task_id);
    }
  }
}

// PyPTO's two names are joined by stream/task id and time: ids that wrap
// (65,536 tasks apart) do not join two kernels, and rows without a time join
// only an id that task_time uses once.
TEST(UnifiedDb, KernelNamesJoinByIdsAndTime) {
  auto launch = [](int64_t start_ns, double us, int64_t task) {
    LaunchInfo l;
    l.stream_id = 48;
    l.task_id = task;
    l.start_ns = start_ns;
    l.duration_us = us;
    return l;
  };
  std::vector<OpCandidate> tt(2), op(3);
  tt[0].op_name = "tilefwk_0_mix_aic";
  tt[0].launches = {launch(kStartNs, 9.2, 5)};
  tt[1].op_name = "Other";
  tt[1].launches = {launch(kStartNs + 900'000'000, 5.0, 5), launch(kStartNs + 1'000, 1.0, 6),
                    launch(kStartNs + 2'000'000, 1.0, 6)};
  op[0].op_name = "PYPTO_k";
  for (int k = 0; k < 3; ++k) op[0].launches.push_back(launch(kStartNs + 780 + k * 2'600, 2.6, 5));
  op[0].count = 3;
  op[1].op_name = "Other";
  op[1].launches = {launch(kStartNs + 900'000'780, 4.0, 5)};
  op[2].op_name = "untimed";
  op[2].launches = {launch(0, 1.0, 6)};
  op[2].launches[0].start_ns.reset();
  std::vector<NameLink> links = LinkNames(op, tt);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].op_summary, 0u);
  EXPECT_EQ(links[0].task_time, 0u);
  EXPECT_EQ(links[0].rows, 3);
  EXPECT_EQ(links[0].launches, 1);
  EXPECT_EQ(links[1].op_summary, 1u);
  EXPECT_EQ(links[1].task_time, 1u);
  tt[0].count = 1;
  EXPECT_EQ(DescribeLink(op[0], tt[0], links[0]),
            "op_summary's PYPTO_k and task_time's tilefwk_0_mix_aic are one kernel: 3 of its 3 "
            "op_summary rows share stream/task ids and start times with 1 of 1 tilefwk_0_mix_aic "
            "launches (3 rows per launch); summarize reads op_summary (--op-name PYPTO_k), "
            "--quick reads task_time (--op-name tilefwk_0_mix_aic)");
}

TEST(UnifiedDb, BrokenDbIsAClearError) {
  testing::TempDir t;
  testing::WriteFile(RunDir(t.path()) / "msprof_20260101000001.db", "not a database");
  absl::StatusOr<Evidence> ev = BuildEvidence(t.path(), Opts());
  ASSERT_FALSE(ev.ok());
  EXPECT_NE(ev.status().message().find("msprof_20260101000001.db"), std::string::npos)
      << ev.status();
}

TEST(UnifiedDb, RefusalListsAreBounded) {
  std::vector<LaunchInfo> l(700);
  for (size_t i = 0; i < l.size(); ++i) {
    l[i].start_ns = kStartNs + static_cast<int64_t>(i) * 1000;
    l[i].duration_us = 10 + static_cast<double>(i % 13);
  }
  OrderLaunches(&l);
  absl::StatusOr<std::vector<size_t>> s = SelectLaunches(l, {}, "k", "f.csv");
  ASSERT_FALSE(s.ok());
  std::string msg(s.status().message());
  EXPECT_LT(std::count(msg.begin(), msg.end(), '\n'), 25);
  EXPECT_NE(msg.find("700 launches"), std::string::npos);
  EXPECT_NE(msg.find("#700 "), std::string::npos);
  EXPECT_NE(msg.find("slowest"), std::string::npos);
  EXPECT_NE(msg.find("--launches-of"), std::string::npos);
}

TEST(UnifiedDb, OddPathsNeverThrow) {
  testing::TempDir t;
  EXPECT_EQ(DetectInput("").status().code(), absl::StatusCode::kInvalidArgument);
  testing::WriteFile(t.path() / "file", "x");
  for (fs::path p : {t.path() / "file", t.path() / "missing", t.path() / "file" / "below",
                     fs::path("/proc/self/fd/999999"), fs::path(std::string(5000, 'a')),
                     fs::path("\n"), t.path() / "PROF_1" / ".." / ".."}) {
    absl::StatusOr<DetectedInput> in = DetectInput(p);
    if (in.ok()) continue;
    EXPECT_FALSE(in.status().message().empty()) << p;
    BuildOptions o = Opts();
    EXPECT_FALSE(BuildEvidence(p, o).ok()) << p;
    EXPECT_FALSE(DiscoverCandidates(p).ok()) << p;
  }
}

// Fuzz-style: random trees of msprof-ish names (directories, empty or junk
// files, symlink loops) never make the detector, the builder or discovery
// throw; every failure is a status with a message. Deterministic (fixed seeds).
TEST(UnifiedDb, RandomTreesNeverThrow) {
  const std::vector<std::string> names = {"PROF_000001_20260101000000000_ABCDEFGHIJKLMNOP",
                                          "PROF_PipeUtilization",
                                          "PROF_Sample",
                                          "mindstudio_profiler_output",
                                          "device_0",
                                          "summary",
                                          "sqlite",
                                          "OPPROF_1",
                                          "x_ascend_pt",
                                          "ASCEND_PROFILER_OUTPUT",
                                          "msprof_20260101000001.db",
                                          "op_summary_20260101000001.csv",
                                          "task_time_20260101000001.csv",
                                          "OpBasicInfo.csv",
                                          "kernel_details.csv",
                                          "aicore.db",
                                          "sample.json",
                                          "info.json.0",
                                          "summary.jsonl",
                                          "",
                                          " ",
                                          "..."};
  const std::vector<std::string> junk = {
      "", "x", "Op Name\nk\n", "SQLite format 3", "{]", std::string(kHeader) + Row(true)};
  uint64_t state = 31;
  auto next = [&state](size_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>((state >> 33) % n);
  };
  for (int seed = 0; seed < 40; ++seed) {
    testing::TempDir t;
    std::vector<fs::path> dirs = {t.path()};
    for (int i = 0; i < 14; ++i) {
      fs::path parent = dirs[next(dirs.size())];
      const std::string& n = names[next(names.size())];
      if (n.empty()) continue;
      std::error_code ec;
      switch (next(3)) {
        case 0:
          fs::create_directories(parent / n, ec);
          if (!ec) dirs.push_back(parent / n);
          break;
        case 1:
          if (!fs::exists(parent / n, ec)) testing::WriteFile(parent / n, junk[next(junk.size())]);
          break;
        default: fs::create_directory_symlink(t.path(), parent / n, ec);  // a loop
      }
    }
    BuildOptions o = Opts();
    for (const fs::path& d : dirs) {
      absl::StatusOr<DetectedInput> in = DetectInput(d);
      absl::StatusOr<Evidence> ev = BuildEvidence(d, o);
      absl::StatusOr<Discovery> disc = DiscoverCandidates(d);
      if (!in.ok()) {
        EXPECT_FALSE(in.status().message().empty());
      }
      if (!ev.ok()) {
        EXPECT_FALSE(ev.status().message().empty());
      }
      if (!disc.ok()) {
        EXPECT_FALSE(disc.status().message().empty());
      }
    }
  }
}

}  // namespace
}  // namespace npuperf::evidence
