// PyPTO's kernel under msprof-sim (issue 31): CANN 9 names it PYPTO_<op> in
// op_summary (3 rows per launch with the launch's stream/task id, PMU cells
// N/A) and tilefwk_<n>_mix_aic in task_time and the unified db. What
// discovery (npuperf list-op-names) and summarize make of both names. Needs
// the simulator as sim_group_test.cc does; skipped when it is absent.
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>

#include "evidence/discovery.h"
#include "evidence/evidence.h"
#include "evidence/launch.h"
#include "evidence/task_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kSummaryName[] = "PYPTO_mul_kernel_2d";
constexpr char kTaskName[] = "tilefwk_0_mix_aic";

// A runner: one Cast, then 100 launches of PyPTO's mul_kernel_2d.
constexpr char kApp[] = R"(import msprof_sim
msprof_sim.launch("Cast", block_num=8, gm_to_ub=1 << 21, ub_to_gm=1 << 20, vec_fp16=1 << 20)
msprof_sim.launch("mul_kernel_2d", task_type="MIX_AIC", block_num=24, mix_block_num=48,
                  count=100, pypto=0, gm_to_ub=1 << 22, ub_to_gm=1 << 21, vec_fp16=1 << 22,
                  scalar=5000)
)";

fs::path SimBinary() {
  if (const char* env = std::getenv("NPUPERF_MSPROF_SIM")) return env;
  if (const char* build = std::getenv("NPUPERF_BUILD_DIR"))
    return fs::path(build) / "bin/msprof-sim";
  return {};
}

void RunCommand(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd;
}

class PyptoSimTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::path sim = SimBinary();
    std::error_code ec;
    if (sim.empty() || !fs::exists(sim, ec)) return;
    dir_ = new testing::TempDir();
    testing::WriteFile(dir_->path() / "app.py", kApp);
    const std::string env = "MSPROF_SIM_STATE_DIR=" + (dir_->path() / "state").string() +
                            " MSPROF_SIM_SEED=11 MSPROF_SIM_LAYOUT=cann9 " + sim.string();
    const std::string app = " python3 " + (dir_->path() / "app.py").string() + " >/dev/null 2>&1";
    RunCommand(env + " --output=" + (dir_->path() / "text").string() +
               " --ai-core=on --aic-metrics=PipeUtilization --task-time=on --ascendcl=on" + app);
    RunCommand(env + " --output=" + (dir_->path() / "db").string() +
               " --ai-core=on --aic-metrics=PipeUtilization --task-time=on --type=db" + app);
    ready_ = !::testing::Test::HasFatalFailure();
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "msprof-sim not built (set NPUPERF_MSPROF_SIM)";
  }
  static absl::StatusOr<Evidence> Build(const char* run, const char* op, const char* launch) {
    BuildOptions o;
    o.op_name = op;
    o.soc = "Ascend910B2";
    o.launch = *ParseLaunchSelector(launch);
    return BuildEvidence(dir_->path() / run, o);
  }
  static fs::path Run(const char* name) { return dir_->path() / name; }

  static inline testing::TempDir* dir_ = nullptr;
  static inline bool ready_ = false;
};

TEST_F(PyptoSimTest, DiscoverySaysTheTwoNamesAreOneKernel) {
  auto d = DiscoverCandidates(Run("text"));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->candidates.size(), 2u);
  const OpCandidate& p = d->candidates[0];  // the longest in total
  EXPECT_EQ(p.op_name, kSummaryName);
  EXPECT_EQ(p.count, 300);
  EXPECT_EQ(p.task_type, "MIX_AIC");
  EXPECT_EQ(p.incidental, "");
  EXPECT_EQ(d->candidates[1].op_name, "Cast");
  std::string notes;
  for (const std::string& n : d->notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("op_summary's PYPTO_mul_kernel_2d and task_time's "
                               "tilefwk_0_mix_aic are one kernel: 300 of its 300 op_summary rows "
                               "share stream/task ids and start times with 100 of 100 "
                               "tilefwk_0_mix_aic launches (3 rows per launch)"));
  EXPECT_THAT(notes, HasSubstr("summarize reads op_summary (--op-name PYPTO_mul_kernel_2d), "
                               "--quick reads task_time (--op-name tilefwk_0_mix_aic)"));
  EXPECT_THAT(notes, ::testing::Not(HasSubstr("task_time's Cast")));
  // The db-only run knows the device's name only.
  auto db = DiscoverCandidates(Run("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_EQ(db->candidates.size(), 2u);
  EXPECT_EQ(db->candidates[0].op_name, kTaskName);
  EXPECT_EQ(db->candidates[0].count, 100);
  EXPECT_EQ(db->candidates[0].task_type, "MIX_AIC");
}

// Quick mode reads task_time: its name works, op_summary's is refused with
// the name to use. Each task_time launch spans its three op_summary rows.
TEST_F(PyptoSimTest, QuickModeReadsTheTaskTimeName) {
  LaunchSelector all = *ParseLaunchSelector("all");
  auto q = ReadQuickTiming(Run("text"), kTaskName, all);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->launches.size(), 100u);
  EXPECT_EQ(q->kernel_type, "MIX_AIC");  // task_time's KERNEL_MIX_AIC, normalized
  auto rows = ListLaunches(Run("text"), kSummaryName);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 300u);
  for (size_t i = 0; i < q->launches.size(); ++i) {
    const LaunchInfo& t = q->launches[i];
    double sum = 0;
    for (size_t k = 3 * i; k < 3 * i + 3; ++k) {
      const LaunchInfo& r = (*rows)[k];
      EXPECT_EQ(r.stream_id, t.stream_id);
      EXPECT_EQ(r.task_id, t.task_id);
      EXPECT_GE(*r.start_ns, *t.start_ns);
      sum += r.duration_us;
    }
    EXPECT_NEAR(t.duration_us, sum + 1.2, 1e-6) << "task_time: 0.78 us lead, 0.42 us tail";
  }
  auto refused = ReadQuickTiming(Run("text"), kSummaryName, all);
  ASSERT_TRUE(absl::IsNotFound(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(),
              HasSubstr("--quick reads task_time (--op-name tilefwk_0_mix_aic)"));
}

// Standard mode reads op_summary: the task_time name is refused with the
// op_summary name; that name is read row by row, with a warning that three
// rows make one task, and gives no PMU figure (every cell N/A).
TEST_F(PyptoSimTest, StandardModeReadsTheOpSummaryName) {
  auto refused = Build("text", kTaskName, "all");
  ASSERT_TRUE(absl::IsNotFound(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(),
              HasSubstr("summarize reads op_summary (--op-name PYPTO_mul_kernel_2d)"));
  auto launches = ListLaunches(Run("text"), kTaskName);
  ASSERT_TRUE(absl::IsNotFound(launches.status()));
  EXPECT_THAT(launches.status().message(), HasSubstr("--op-name PYPTO_mul_kernel_2d"));
  auto unique = Build("text", kSummaryName, "unique");
  ASSERT_TRUE(absl::IsFailedPrecondition(unique.status())) << unique.status();
  auto ev = Build("text", kSummaryName, "all");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->task_type, "MIX_AIC");
  EXPECT_EQ(ev->duration.samples_us.size(), 300u);
  EXPECT_EQ(ev->aiv_time_us, 0);
  EXPECT_EQ(ev->aicore_time_us, 0);
  std::string warnings;
  for (const std::string& w : ev->warnings) warnings += w + "\n";
  EXPECT_THAT(warnings, HasSubstr("200 of the 300 rows of PYPTO_mul_kernel_2d used continue the "
                                  "task of an earlier row"));
}

// A --type=db run has the device's name only: it is summarized from the db.
TEST_F(PyptoSimTest, DbOnlyRunIsSummarizedUnderTheDeviceName) {
  auto ev = Build("db", kTaskName, "all");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->task_type, "MIX_AIC");
  EXPECT_EQ(ev->block_num, 24);
  EXPECT_EQ(ev->duration.samples_us.size(), 100u);
  EXPECT_EQ(ev->aiv_time_us, 0);  // no TASK_PMU_INFO row: op_summary's cells are N/A
  EXPECT_FALSE(Build("db", kSummaryName, "all").ok());
}

}  // namespace
}  // namespace npuperf::evidence
