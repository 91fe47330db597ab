// Issue 15, discovery on the service through the real binaries: npuperf
// discover -> a PROFILE_MODE_DISCOVER job leased and device-locked like any
// other -> the agent runs the runner once under msprof-sim (task time) -> the
// candidate table stored with the job -> printed; submit --op-name-auto takes
// the one candidate that is not a known incidental kernel, or fails listing
// them.
#include <filesystem>
#include <fstream>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/collection_service.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

constexpr char kRmsNormKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

// Two kernels neither of which is incidental, plus a Cast that is.
constexpr char kTwoKernelRunner[] = R"PY(import os
channel = os.environ.get("MSPROF_SIM_LAUNCH_FILE")
if channel:
    with open(channel, "a") as f:
        f.write("launch op=Cast task=AI_VECTOR_CORE blocks=4 gm_to_ub=1048576\n")
        f.write("launch op=left_kernel task=AI_VECTOR_CORE blocks=8 gm_to_ub=8388608\n")
        f.write("launch op=right_kernel task=AI_VECTOR_CORE blocks=8 gm_to_ub=4194304\n")
        f.write("launch op=right_kernel task=AI_VECTOR_CORE blocks=8 gm_to_ub=4194304\n")
)PY";

// One target and two kernels that are incidental (discovery's list in
// evidence/candidates.h). The examples' rmsnorm is not such an operator: it
// also launches aclnnRmsNorm and aclnnAdd, its reference implementations,
// so --op-name-auto rightly refuses it.
constexpr char kSingleTargetRunner[] = R"PY(import os
channel = os.environ.get("MSPROF_SIM_LAUNCH_FILE")
if channel:
    with open(channel, "a") as f:
        f.write("launch op=StatelessNormal task=AI_VECTOR_CORE blocks=4 gm_to_ub=1048576\n")
        f.write("launch op=Cast task=AI_VECTOR_CORE blocks=4 gm_to_ub=1048576\n")
        f.write("launch op=single_kernel task=AI_VECTOR_CORE blocks=8 gm_to_ub=8388608\n")
)PY";

std::string Operator(const std::string& name) {
  return (SourceDir() / "examples/ops" / name).string();
}

v1::Collection Parse(const CommandResult& r) {
  v1::Collection col;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) << r.out << r.err;
  return col;
}

TEST(DiscoveryTest, DiscoverPrintsTheCandidatesOfAnExampleOperator) {
  Cluster c;
  c.Start("0-1");
  auto text = c.Cli({"discover", Operator("inplace_add_rmsnorm")});
  ASSERT_EQ(text.exit_code, 0) << text.out << text.err << "\nagent log:\n" << c.agent->Log();
  EXPECT_NE(
      text.out.find("count\ttask_type\ttotal_duration_us\tlaunches\tincidental\texact_op_name"),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(std::string("\t-\t") + kRmsNormKernel + "\n"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("incidental kernel StatelessNormal\tStatelessNormal"), std::string::npos)
      << text.out;

  auto json = c.Cli({"--format", "json", "discover", Operator("inplace_add_rmsnorm")});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const v1::Collection col = Parse(json);
  ASSERT_EQ(col.jobs_size(), 1);
  EXPECT_EQ(col.spec().params().mode(), v1::PROFILE_MODE_DISCOVER);
  const v1::Job& job = col.jobs(0);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.round_id(), 0) << "a discovery job stores no round";
  EXPECT_TRUE(job.placement().agent_id().size() > 0) << "leased like any job";
  bool found = false;
  for (const auto& k : job.discovery().candidates()) {
    if (k.op_name() != kRmsNormKernel) continue;
    found = true;
    EXPECT_GE(k.count(), 1);
    EXPECT_GT(k.total_duration_us(), 0);
    EXPECT_EQ(k.launches_size(), k.count());
  }
  EXPECT_TRUE(found) << json.out;
  // From the discovery run's own output (its op_summary: a task-time run
  // writes one too, and it names every kernel).
  EXPECT_EQ(job.discovery().source().rfind("discovery/PROF_", 0), 0u) << job.discovery().source();
}

TEST(DiscoveryTest, OpNameAutoTakesTheSingleTargetAndRefusesAnAmbiguousOperator) {
  Cluster c;
  c.Start("0-1");
  const auto single = c.dir.path() / "single_target";
  std::filesystem::create_directories(single);
  std::ofstream(single / "test_single_target.py") << kSingleTargetRunner;
  auto ok = c.Cli({"--format", "json", "submit", "--quick", "--op-name-auto", single.string(),
                   "--warm-up", "0", "--repeats", "1"});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err << "\nagent log:\n" << c.agent->Log();
  EXPECT_NE(ok.err.find("discovered single_target: single_kernel"), std::string::npos) << ok.err;
  const v1::Collection col = Parse(ok);
  ASSERT_EQ(col.jobs_size(), 1);
  EXPECT_EQ(col.jobs(0).op_name(), "single_kernel");
  EXPECT_EQ(col.jobs(0).state(), v1::JOB_STATE_SUCCEEDED) << col.jobs(0).reason();
  EXPECT_GT(col.jobs(0).kernel_time_us(), 0);

  const auto op = c.dir.path() / "two_kernels";
  std::filesystem::create_directories(op);
  std::ofstream(op / "test_two_kernels.py") << kTwoKernelRunner;
  auto listed = c.Cli({"discover", op.string()});
  ASSERT_EQ(listed.exit_code, 0) << listed.out << listed.err;
  EXPECT_NE(listed.out.find("\t-\tleft_kernel\n"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("2\tAI_VECTOR_CORE\t"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("incidental kernel Cast\tCast\n"), std::string::npos) << listed.out;

  auto ambiguous = c.Cli({"submit", "--quick", "--op-name-auto", op.string()});
  EXPECT_EQ(ambiguous.exit_code, 2) << ambiguous.out << ambiguous.err;
  EXPECT_NE(ambiguous.err.find("2 candidate target kernels"), std::string::npos) << ambiguous.err;
  EXPECT_NE(ambiguous.err.find("left_kernel"), std::string::npos) << ambiguous.err;
  EXPECT_NE(ambiguous.err.find("right_kernel [AI_VECTOR_CORE, 2 launches]"), std::string::npos)
      << ambiguous.err;
  EXPECT_NE(ambiguous.err.find("Cast"), std::string::npos) << ambiguous.err;
  // Queued: single_target's discovery and its quick collection, the listed
  // discovery, the ambiguous operator's discovery (and nothing after it).
  auto list = c.Cli({"--format", "json", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  v1::ListCollectionsResponse collections;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(list.out, &collections).ok()) << list.out;
  EXPECT_EQ(collections.collections_size(), 4) << list.out;
}

TEST(DiscoveryTest, DiscoverRefusesATargetNameAndOpNameAutoRefusesOne) {
  Cluster c;
  c.Start("");
  auto named = c.Cli({"discover", Operator("inplace_add_rmsnorm"), "--op-name", "k"});
  EXPECT_EQ(named.exit_code, 2) << named.out << named.err;  // CLI11: discover has no --op-name
  auto both =
      c.Cli({"submit", "--op-name-auto", "--op-name", "k", Operator("inplace_add_rmsnorm")});
  EXPECT_EQ(both.exit_code, 2) << both.out << both.err;
  EXPECT_NE(both.err.find("--op-name-auto excludes --op-name"), std::string::npos) << both.err;
}

}  // namespace
}  // namespace npuperf::testing
