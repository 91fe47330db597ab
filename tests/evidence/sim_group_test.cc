// Parses msprof-sim output back through evidence/ (style.md §3 tests/sim).
// Needs the simulator: $NPUPERF_MSPROF_SIM, else <build>/bin/msprof-sim; the
// tests are skipped (not passed) when neither exists.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>

#include "evidence/archive.h"
#include "evidence/discovery.h"
#include "evidence/evidence.h"
#include "evidence/op_summary.h"
#include "evidence/opprof.h"
#include "evidence/prof_layout.h"
#include "evidence/summary_text.h"
#include "evidence/task_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

fs::path SimBinary() {
  if (const char* env = std::getenv("NPUPERF_MSPROF_SIM")) return env;
  if (const char* build = std::getenv("NPUPERF_BUILD_DIR"))
    return fs::path(build) / "bin/msprof-sim";
  return {};
}

fs::path Runner() {
  const char* src = std::getenv("NPUPERF_SOURCE_DIR");
  fs::path root = src ? fs::path(src) : fs::path(NPUPERF_EVIDENCE_TESTDATA) / "../../..";
  return root / "examples/ops/inplace_add_rmsnorm/test_inplace_add_rmsnorm.py";
}

void RunCommand(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd;
}

// Seven metric runs + the sample run into `group`, and one quick run.
void Collect(const fs::path& sim, const std::string& env, const fs::path& group,
             const fs::path& quick) {
  std::string app = " python3 " + Runner().string() + " --case-id p1 >/dev/null 2>&1";
  for (const std::string& m : SevenMetrics()) {
    RunCommand(env + sim.string() + " --output=" + (group / ("PROF_" + m)).string() +
               " --ai-core=on --aic-metrics=" + m + " --task-time=on --ascendcl=on" + app);
  }
  RunCommand(env + sim.string() + " --output=" + (group / "PROF_Sample").string() +
             " --ai-core=on --aic-metrics=PipeUtilization --aic-mode=sample-based --aic-freq=100"
             " --task-time=on --ascendcl=on" +
             app);
  RunCommand(env + sim.string() + " --output=" + quick.string() + " --task-time=on --ascendcl=on" +
             app);
}

class SimGroupTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::path sim = SimBinary();
    std::error_code ec;
    if (sim.empty() || !fs::exists(sim, ec) || !fs::exists(Runner(), ec)) return;
    dir_ = new testing::TempDir();
    std::string state = "MSPROF_SIM_STATE_DIR=" + (dir_->path() / "state").string() + " ";
    Collect(sim, state + "MSPROF_SIM_SEED=7 ", dir_->path() / "a2", dir_->path() / "a2q");
    const std::string runner = " python3 " + Runner().string() + " --case-id p1 >/dev/null 2>&1";
    RunCommand(state + "MSPROF_SIM_SEED=7 " + sim.string() +
               " --output=" + (dir_->path() / "a2_typedb").string() +
               " --ai-core=on --aic-metrics=PipeUtilization --task-time=on --type=db" + runner);
    RunCommand(state + "MSPROF_SIM_SEED=7 MSPROF_SIM_LAYOUT=cann9 " + sim.string() +
               " --output=" + (dir_->path() / "a2_cann9_l0").string() +
               " --ai-core=on --aic-metrics=PipeUtilization --task-time=l0" + runner);
    RunCommand(state + "MSPROF_SIM_SEED=7 " + sim.string() +
               " --output=" + (dir_->path() / "a2" / "PROF_MemoryAccess").string() +
               " --ai-core=on --aic-metrics=MemoryAccess --task-time=on" + runner);
    // The same runs (same seed) written in the tree before CANN 8.0.
    Collect(sim, state + "MSPROF_SIM_SEED=7 MSPROF_SIM_LAYOUT=cann7 ", dir_->path() / "a2_cann7",
            dir_->path() / "a2q_cann7");
    // The same runs as torch_npu.profiler exports (kernel_details.csv).
    Collect(sim, state + "MSPROF_SIM_SEED=7 MSPROF_SIM_LAYOUT=torch_npu ",
            dir_->path() / "a2_torch", dir_->path() / "a2q_torch");
    // msprof op of the target in the same process (same seed, so the same launch), and
    // one with the clock stuck at 1200 MHz.
    const std::string op = sim.string() + " op --kernel-name=" + kKernel + " --output=";
    const std::string app = " python3 " + Runner().string() + " --case-id p1 >/dev/null 2>&1";
    RunCommand(state + "MSPROF_SIM_SEED=7 " + op + (dir_->path() / "a2_op").string() + app);
    RunCommand(state + "MSPROF_SIM_SEED=7 MSPROF_SIM_DVFS=1200:1 " + op +
               (dir_->path() / "a2_op_dvfs").string() + app);
    // A5 on physical device 3, DVFS stuck at 1200 MHz, CANN 8.3 "Block Dim" naming.
    Collect(sim,
            state +
                "MSPROF_SIM_SEED=9 MSPROF_SIM_SOC_MAP=0-7=Ascend950PR_9589 "
                "TILE_FWK_DEVICE_ID=3 MSPROF_SIM_DVFS=1200:1 MSPROF_SIM_BLOCK_NAMING=dim ",
            dir_->path() / "a5", dir_->path() / "a5q");
    ready_ = !::testing::Test::HasFatalFailure();
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "msprof-sim not built (set NPUPERF_MSPROF_SIM)";
  }
  static absl::StatusOr<Evidence> Build(const char* group, const char* soc) {
    BuildOptions o;
    o.op_name = kKernel;
    o.soc = soc;
    return BuildEvidence(dir_->path() / group, o);
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline bool ready_ = false;
};

TEST_F(SimGroupTest, A2GroupIsCompleteAndConsistent) {
  auto ev = Build("a2", "Ascend910B2");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(Name(ev->seven_metric_status), "complete");
  EXPECT_TRUE(ev->errors.empty()) << ev->errors[0].message;
  EXPECT_EQ(ev->task_type, "AI_VECTOR_CORE");
  EXPECT_EQ(ev->block_num, 48);
  EXPECT_EQ(ev->input_shapes, "128,8192;128,8192;8192");
  EXPECT_EQ(ev->aicore_time_us, 0);
  ASSERT_GT(ev->aiv_time_us, 0);
  EXPECT_NEAR(ev->head_overhead_us, ev->task_duration_us - ev->aiv_time_us, 1e-9);
  EXPECT_EQ(LowerName(ev->bound.primary_core), "aiv");
  // No DVFS in this run: cycles / aiv_time / 48 blocks * ceil(48/48) = 1800 MHz within rounding.
  EXPECT_EQ(Name(ev->dvfs.status), "ok");
  EXPECT_NEAR(ev->dvfs.observed_mhz, 1800, 1800 * 0.01);
  const PerCore& p = ev->per_core;
  ASSERT_EQ(StatusText(p), "process_scope_unattributed");
  EXPECT_EQ(p.device_id, 0);
  EXPECT_EQ(Name(p.core_type), "AIV");
  EXPECT_EQ(p.cores.size(), 48u);
  EXPECT_NEAR(p.max_us, ev->aiv_time_us, 1e-6);  // the reference's back-calculation rule
  EXPECT_EQ(Name(ev->per_core_secondary.core_type), "AIC");
  // The sample db sums the randn/cast kernels too: when the rule's clock is
  // above the rated 1800 MHz + 5 %, it is marked implausible and says so.
  bool warned = false;
  for (const std::string& w : ev->warnings)
    warned |= w.find("per-core AIV: implied clock") != std::string::npos;
  const bool implausible = p.freq_ghz * 1000 > 1800 * 1.05;
  EXPECT_EQ(warned, implausible) << p.freq_ghz;
  EXPECT_EQ(p.clock_implausible, implausible);
}

// Real msprof output parses the same way whatever tree its CANN wrote: the
// pre-8.0 layout (device_<id>/summary, op_summary_<dev>_1_1_<ts>.csv) gives
// the very figures of the CANN 8 layout.
TEST_F(SimGroupTest, ThePre80TreeGivesTheSameEvidence) {
  ASSERT_TRUE(fs::is_directory(dir_->path() / "a2_cann7"));
  bool pre8_tree = false;
  for (const auto& e : fs::recursive_directory_iterator(dir_->path() / "a2_cann7")) {
    ASSERT_NE(e.path().filename(), "mindstudio_profiler_output") << e.path();
    pre8_tree |= e.path().parent_path().filename() == "summary" &&
                 e.path().filename().string().rfind("op_summary_0_1_1_", 0) == 0;
  }
  EXPECT_TRUE(pre8_tree) << "no device_0/summary/op_summary_0_1_1_<ts>.csv";
  auto cann8 = Build("a2", "Ascend910B2");
  auto cann7 = Build("a2_cann7", "Ascend910B2");
  ASSERT_TRUE(cann8.ok()) << cann8.status();
  ASSERT_TRUE(cann7.ok()) << cann7.status();
  EXPECT_EQ(Name(cann7->seven_metric_status), "complete");
  EXPECT_EQ(cann7->task_duration_us, cann8->task_duration_us);
  EXPECT_EQ(cann7->aiv_time_us, cann8->aiv_time_us);
  EXPECT_EQ(Name(cann7->bound.label), Name(cann8->bound.label));
  EXPECT_EQ(StatusText(cann7->per_core), StatusText(cann8->per_core));
  EXPECT_EQ(cann7->per_core.cores.size(), cann8->per_core.cores.size());
  auto q8 = ReadQuickTiming(dir_->path() / "a2q", kKernel);
  auto q7 = ReadQuickTiming(dir_->path() / "a2q_cann7", kKernel);
  ASSERT_TRUE(q8.ok()) << q8.status();
  ASSERT_TRUE(q7.ok()) << q7.status();
  EXPECT_EQ(q7->launches_us, q8->launches_us);
}

// torch_npu's export of the same launches: kernel_details.csv under its own
// column names (no Device_id, Step Id first), no task_time, the raw PROF_*
// inside *_ascend_pt; the figures are op_summary's.
TEST_F(SimGroupTest, TheTorchNpuExportGivesTheSameEvidence) {
  const fs::path run = dir_->path() / "a2_torch" / "PROF_PipeUtilization";
  std::vector<fs::path> pts;
  for (const auto& e : fs::directory_iterator(run)) pts.push_back(e.path());
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_THAT(pts[0].filename().string(), ::testing::EndsWith("_ascend_pt"));
  const fs::path table = pts[0] / "ASCEND_PROFILER_OUTPUT";
  EXPECT_TRUE(fs::exists(pts[0] / "profiler_info_0.json"));
  EXPECT_FALSE(fs::exists(table / "task_time.csv"));
  std::ifstream kd(table / "kernel_details.csv");
  std::string header;
  std::getline(kd, header);
  EXPECT_THAT(header, ::testing::StartsWith("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP "
                                            "State,Accelerator Core,Start Time(us),Duration(us)"));
  EXPECT_THAT(header, ::testing::Not(HasSubstr("Device_id")));
  auto cann8 = Build("a2", "Ascend910B2");
  auto torch = Build("a2_torch", "Ascend910B2");
  ASSERT_TRUE(cann8.ok()) << cann8.status();
  ASSERT_TRUE(torch.ok()) << torch.status();
  EXPECT_EQ(Name(torch->seven_metric_status), "complete");
  EXPECT_TRUE(torch->errors.empty()) << torch->errors[0].message;
  EXPECT_EQ(torch->task_duration_us, cann8->task_duration_us);
  EXPECT_EQ(torch->aiv_time_us, cann8->aiv_time_us);
  EXPECT_EQ(torch->block_num, cann8->block_num);
  EXPECT_EQ(torch->input_shapes, cann8->input_shapes);
  EXPECT_EQ(Name(torch->bound.label), Name(cann8->bound.label));
  // The CANN 8 run reads the clock from its unified db's AICORE_FREQ; torch_npu's export
  // back-calculates it from cycles (rounded cells): the same clock within rounding.
  EXPECT_NEAR(torch->dvfs.observed_mhz, cann8->dvfs.observed_mhz, cann8->dvfs.observed_mhz * 0.005);
  // The sample run's aicore.db is found in the PROF_* inside *_ascend_pt.
  EXPECT_EQ(StatusText(torch->per_core), StatusText(cann8->per_core));
  EXPECT_EQ(torch->per_core.cores.size(), cann8->per_core.cores.size());
}

// msprof op (OPPROF_*) of the target: OpBasicInfo has op_summary's Task
// Duration and Block Dim of the same launch, the block mean of aiv_time(us) is
// op_summary's aiv_time(us), the pipe ratios are its ratios, and Current/Rated
// Freq drive the DVFS check (ok at 1800, suspect at 1200).
TEST_F(SimGroupTest, MsprofOpOutputHasTheFiguresOfOpSummary) {
  auto cann8 = Build("a2", "Ascend910B2");
  ASSERT_TRUE(cann8.ok()) << cann8.status();
  auto op = ReadOpprof(dir_->path() / "a2_op");
  ASSERT_TRUE(op.ok()) << op.status();
  ASSERT_TRUE(op->basic.has_value());
  EXPECT_THAT(op->data_dir.filename().string(), ::testing::StartsWith("OPPROF_"));
  EXPECT_EQ(op->basic->op_name, kKernel);
  EXPECT_EQ(op->basic->op_type, "vector");
  EXPECT_EQ(op->basic->block_dim, cann8->block_num);
  EXPECT_NEAR(op->basic->task_duration_us, cann8->task_duration_us, 0.0005);
  EXPECT_EQ(op->basic->current_freq_mhz, 1800);
  EXPECT_EQ(op->basic->rated_freq_mhz, 1800);
  EXPECT_EQ(op->hardware.soc, "Ascend910B2");
  EXPECT_EQ(op->metrics.size(), 7u);
  const OpprofMetric& pipe = op->metrics.front();
  ASSERT_EQ(pipe.metric, "PipeUtilization");
  EXPECT_EQ(pipe.rows, 48u);  // one row per block (vector0)
  const ColumnStats* aiv = pipe.Find("aiv_time(us)");
  ASSERT_NE(aiv, nullptr);
  EXPECT_NEAR(aiv->avg, cann8->aiv_time_us, 0.0005 + 1e-9);
  EXPECT_GE(aiv->max, aiv->avg);
  EXPECT_EQ(pipe.Find("aic_time(us)"), nullptr);  // NA on every row of a vector kernel
  for (const char* ratio : {"aiv_vec_ratio", "aiv_mte2_ratio", "aiv_scalar_ratio"}) {
    const ColumnStats* c = pipe.Find(ratio);
    ASSERT_NE(c, nullptr) << ratio;
    ASSERT_TRUE(cann8->merged.count(ratio)) << ratio;
    EXPECT_NEAR(c->avg, cann8->merged.at(ratio), 0.0005 + 1e-9) << ratio;
  }
  BuildOptions o;
  o.op_name = kKernel;
  o.soc = "Ascend910B2";
  auto ev = OpprofEvidence(dir_->path() / "a2_op", o, Evidence{});
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(Name(ev->dvfs.status), "ok");
  EXPECT_EQ(Name(ev->dvfs.source), "opprof.current_freq");
  auto dip = OpprofEvidence(dir_->path() / "a2_op_dvfs", o, Evidence{});
  ASSERT_TRUE(dip.ok()) << dip.status();
  EXPECT_EQ(Name(dip->dvfs.status), "suspect");
  EXPECT_DOUBLE_EQ(dip->dvfs.observed_mhz, 1200);
  EXPECT_DOUBLE_EQ(dip->dvfs.rated_mhz, 1800);
}

TEST_F(SimGroupTest, A5Device3DvfsAndBlockDimNaming) {
  auto ev = Build("a5", "Ascend950PR_9589");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(Name(ev->seven_metric_status), "complete");
  EXPECT_EQ(ev->block_num, 64);  // read from "Block Dim"
  EXPECT_EQ(ev->per_core.device_id, 3);
  EXPECT_EQ(ev->per_core.cores.size(), 64u);
  EXPECT_EQ(Name(ev->dvfs.status), "suspect");
  // The unified db beside the export records the dip in AICORE_FREQ: a measured clock.
  EXPECT_EQ(Name(ev->dvfs.source), "msprof_db.AICORE_FREQ");
  ASSERT_TRUE(ev->db_clock.has_value());
  EXPECT_EQ(ev->db_clock->min_mhz, 1200);
  EXPECT_NEAR(ev->dvfs.observed_mhz, 1200, 1200 * 0.02);
  EXPECT_DOUBLE_EQ(ev->dvfs.rated_mhz, 1650);
  EXPECT_NEAR(ev->dvfs.deviation_pct, (1200.0 - 1650) / 1650 * 100, 2);
}

TEST_F(SimGroupTest, MemoryAccessIsAnEighthGroup) {
  auto ev = Build("a2", "Ascend910B2");
  ASSERT_TRUE(ev.ok()) << ev.status();
  ASSERT_EQ(ev->metrics.size(), 8u);
  EXPECT_EQ(ev->metrics.back().group, "MemoryAccess");
  EXPECT_GT(ev->merged.count("aiv_GM_to_UB_datas(KB)"), 0u);
}

TEST_F(SimGroupTest, TheUnifiedDbGivesTheSameEvidenceAsTheCsv) {
  const fs::path db_only = dir_->path() / "a2_db";
  fs::copy(dir_->path() / "a2", db_only, fs::copy_options::recursive);
  int removed = 0;
  for (const std::string& m : SevenMetrics()) {
    auto prof = FindSingleProfDir(db_only / ("PROF_" + m));
    ASSERT_TRUE(prof.ok()) << prof.status();
    removed += fs::remove_all(*prof / "mindstudio_profiler_output") > 0;
  }
  EXPECT_EQ(removed, 7);
  auto csv = Build("a2", "Ascend910B2");
  auto db = Build("a2_db", "Ascend910B2");
  ASSERT_TRUE(csv.ok()) << csv.status();
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(Name(db->duration.source), "msprof_db.TASK.endNs-startNs");
  EXPECT_EQ(db->op_type, csv->op_type);
  EXPECT_EQ(db->task_type, csv->task_type);
  EXPECT_EQ(db->block_num, csv->block_num);
  EXPECT_EQ(db->input_shapes, csv->input_shapes);
  ASSERT_EQ(db->duration.samples_us.size(), csv->duration.samples_us.size());
  for (size_t i = 0; i < db->duration.samples_us.size(); ++i)
    EXPECT_NEAR(db->duration.samples_us[i], csv->duration.samples_us[i], 1e-3);
  ASSERT_EQ(db->duration.core_samples_us.size(), csv->duration.core_samples_us.size());
  EXPECT_FALSE(csv->duration.core_samples_us.empty());
  for (size_t i = 0; i < db->duration.core_samples_us.size(); ++i)
    EXPECT_NEAR(db->duration.core_samples_us[i], csv->duration.core_samples_us[i], 1e-3);
  EXPECT_EQ(db->launch.used[0].start_ns, csv->launch.used[0].start_ns);
  EXPECT_EQ(db->merged, csv->merged);
  EXPECT_EQ(Name(db->bound.label), Name(csv->bound.label));
  EXPECT_EQ(Name(db->bound.routing_label), Name(csv->bound.routing_label));
  EXPECT_EQ(Name(db->dvfs.status), Name(csv->dvfs.status));
  EXPECT_EQ(db->l2_hit_rate_pct, csv->l2_hit_rate_pct);
}

TEST_F(SimGroupTest, TypeDbRunIsReadFromItsDb) {
  auto prof = FindSingleProfDir(dir_->path() / "a2_typedb");
  ASSERT_TRUE(prof.ok()) << prof.status();
  EXPECT_FALSE(fs::exists(*prof / "mindstudio_profiler_output"));
  auto db = Build("a2_typedb", "Ascend910B2");
  auto csv = Build("a2", "Ascend910B2");
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE(csv.ok()) << csv.status();
  EXPECT_EQ(db->task_type, csv->task_type);
  EXPECT_EQ(db->metrics[0].fields, csv->metrics[0].fields);
  auto d = DiscoverCandidates(dir_->path() / "a2_typedb");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_THAT(d->source, HasSubstr("(unified db)"));
  bool found = false;
  for (const OpCandidate& c : d->candidates)
    found |= c.op_name == kKernel && c.task_type == "AI_VECTOR_CORE" && c.incidental.empty();
  EXPECT_TRUE(found) << FormatCandidatesTsv(d->candidates);
}

TEST_F(SimGroupTest, Cann9Level0IsFilledFromTheDbAndTheCycles) {
  auto l0 = Build("a2_cann9_l0", "Ascend910B2");
  auto l1 = Build("a2", "Ascend910B2");
  ASSERT_TRUE(l0.ok()) << l0.status();
  ASSERT_TRUE(l1.ok()) << l1.status();
  EXPECT_EQ(l0->task_type, "AI_VECTOR_CORE");
  EXPECT_EQ(l0->block_num, l1->block_num);
  EXPECT_NEAR(l0->aiv_time_us, l1->aiv_time_us, l1->aiv_time_us * 0.001);
  EXPECT_EQ(LowerName(l0->bound.primary_core), "aiv");
  EXPECT_EQ(Name(l0->bound.routing_label), Name(l1->bound.routing_label));
  EXPECT_THAT(l0->sources["aiv_time_us"], HasSubstr("cycles: aiv_total_cycles"));
  EXPECT_THAT(l0->sources["identity"], HasSubstr("N/A cells from msprof_db"));
  auto d = DiscoverCandidates(dir_->path() / "a2_cann9_l0");
  ASSERT_TRUE(d.ok()) << d.status();
  bool found = false;
  for (const OpCandidate& c : d->candidates)
    found |= c.op_name == kKernel && c.task_type == "AI_VECTOR_CORE" && c.incidental.empty();
  EXPECT_TRUE(found) << FormatCandidatesTsv(d->candidates);
}

TEST_F(SimGroupTest, QuickRunSingleLaunch) {
  auto t = ReadQuickTiming(dir_->path() / "a2q", kKernel);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->launches_us.size(), 1u);
  EXPECT_EQ(Name(t->method), "single");
  EXPECT_GT(t->aggregate_us, 0);
  EXPECT_EQ(t->kernel_type, "AI_VECTOR_CORE");
}

// What `npuperf list-op-names` and `npuperf summarize` do over this library
// (client/offline_commands.cc; tested with fixtures in tests/client), on the
// simulator's group: discovery TSV, archived round, summary.
TEST_F(SimGroupTest, DiscoveryAndArchivedRoundOnSimGroup) {
  auto prof = FindSingleProfDir(dir_->path() / "a2" / "PROF_PipeUtilization");
  ASSERT_TRUE(prof.ok()) << prof.status();
  auto output = ProfilerOutputDir(*prof);
  ASSERT_TRUE(output.ok()) << output.status();
  auto parts = FindCsvParts(*output, "op_summary");
  ASSERT_TRUE(parts.ok()) << parts.status();
  auto candidates = ListCandidates(*parts);
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  const std::string tsv = FormatCandidatesTsv(*candidates);
  EXPECT_THAT(tsv, HasSubstr(std::string("1\tAI_VECTOR_CORE\t")));
  EXPECT_THAT(tsv, HasSubstr(kKernel));
  testing::TempDir ops;
  auto ev = Build("a2", "Ascend910B2");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_TRUE(ev->errors.empty()) << ev->errors[0].message;  // summarize would exit 1
  auto round = ReserveRound(ops.path(), "");
  ASSERT_TRUE(round.ok()) << round.status();
  auto copied = WriteRound(*ev, *round, Lang::kEn);
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_TRUE(fs::exists(ops.path() / "docs/perf/round_001/op_summary_L2Cache.csv"));
  EXPECT_THAT(RenderSummary(*ev, {Lang::kEn, *round}), HasSubstr("primary_core=aiv"));
}

}  // namespace
}  // namespace npuperf::evidence
