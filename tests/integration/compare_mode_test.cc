// Compare mode through the real binaries: the standard protocol plus the
// operator directory's golden data joined per case, after the directory was
// bundled and unpacked into the agent's per-job scratch directory (so none of
// the absolute paths recorded in GOLDEN_PERF_REPORT.json exist there).
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "npuperf/v1/collection.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

constexpr char kRmsNormKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

TEST(CompareModeTest, GoldenDataJoinsPerCaseInARelocatedBundle) {
  Cluster c;
  c.Start("0-1");
  const std::string op = (SourceDir() / "examples/ops/inplace_add_rmsnorm").string();
  auto r =
      c.Cli({"--format", "json", "submit", "--compare", op, "--op-name", kRmsNormKernel,
             "--case-arg", "--case-id", "--case-id", "p0", "--case-id", "p1", "--repeats", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nagent log:\n" << c.agent->Log();
  v1::Collection collection;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &collection).ok()) << r.out;
  ASSERT_EQ(collection.jobs_size(), 2);
  // per_iteration_e2e_us of p0 and p1 in examples/ops/inplace_add_rmsnorm/GOLDEN_PERF_REPORT.json.
  const std::map<std::string, double> golden = {{"p0", 3.021}, {"p1", 7.701}};
  for (const v1::Job& job : collection.jobs()) {
    ASSERT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.case_id() << ": " << job.reason();
    auto round = c.GetRound(job.round_id());
    ASSERT_TRUE(round.ok()) << round.status();
    const v1::Evidence& e = round->evidence();
    EXPECT_EQ(e.fingerprint().mode(), "compare");
    EXPECT_EQ(e.seven_metric_status(), v1::SEVEN_METRIC_STATUS_COMPLETE)
        << "compare runs the standard protocol";
    EXPECT_EQ(e.golden().status(), "joined") << job.case_id();
    EXPECT_EQ(e.golden().label(), "golden_reference_ratio");
    EXPECT_DOUBLE_EQ(e.golden().golden_us(), golden.at(job.case_id())) << job.case_id();
    EXPECT_DOUBLE_EQ(e.golden().kernel_us(), e.duration().aggregate_us());
    EXPECT_GT(e.golden().ratio(), 0);
    EXPECT_NEAR(e.golden().ratio(), e.golden().golden_us() / e.golden().kernel_us(), 1e-9);
  }
  EXPECT_EQ(c.agent->Stop(), 0);
  EXPECT_EQ(c.server->Stop(), 0);
}

TEST(CompareModeTest, SeveralCasesWithoutACaseIdAreRefused) {
  Cluster c;
  c.Start("0");
  const std::string op = (SourceDir() / "examples/ops/inplace_add_rmsnorm").string();
  auto r = c.Cli({"--format", "json", "submit", "--compare", op, "--op-name", kRmsNormKernel,
                  "--repeats", "1"});
  v1::Collection collection;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &collection).ok())
      << r.out << r.err;
  ASSERT_EQ(collection.jobs_size(), 1);
  EXPECT_EQ(collection.jobs(0).state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(collection.jobs(0).reason().find("has 4 cases but the job names none"),
            std::string::npos)
      << collection.jobs(0).reason();
  EXPECT_EQ(c.agent->Stop(), 0);
  EXPECT_EQ(c.server->Stop(), 0);
}

}  // namespace
}  // namespace npuperf::testing
