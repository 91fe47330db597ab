#include "evidence/evidence_proto.h"

#include "evidence/evidence.h"
#include "gtest/gtest.h"
#include "npuperf/v1/evidence.pb.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

TEST(EvidenceProtoTest, ConvertsE2Group) {
  BuildOptions o;
  o.op_name = "main_kernel";
  o.soc = "Ascend910B2";
  auto ev = BuildEvidence(testing::TestData("group_a2_e2"), o);
  ASSERT_TRUE(ev.ok()) << ev.status();
  npuperf::v1::Evidence pb;
  ToProto(*ev, &pb);
  EXPECT_EQ(pb.op_name(), "main_kernel");
  EXPECT_EQ(pb.block_num(), 256);
  EXPECT_EQ(pb.duration().method(), npuperf::v1::AGGREGATION_METHOD_SINGLE);
  EXPECT_DOUBLE_EQ(pb.duration().samples_us(0), 87139.38);
  EXPECT_EQ(pb.seven_metric_status(), npuperf::v1::SEVEN_METRIC_STATUS_COMPLETE);
  ASSERT_EQ(pb.metrics_size(), 7);
  EXPECT_DOUBLE_EQ(pb.metrics(0).fields().at("aiv_scalar_ratio"), 0.999);
  EXPECT_EQ(pb.per_core().cores_size(), 8);
  EXPECT_EQ(pb.per_core().device_id(), 3);
  EXPECT_EQ(pb.per_core().slowest_cores(0), 0);
  EXPECT_EQ(pb.bound().primary_core(), "AIV");
  EXPECT_EQ(pb.bound().label(), "SCALAR_BOUND");
  EXPECT_DOUBLE_EQ(pb.bound().ratios().at("aiv_scalar_ratio"), 0.999);
  EXPECT_EQ(pb.dvfs().status(), "ok");
  // The launch used, its start exact to the ns (no double on the way).
  EXPECT_EQ(pb.launch().selector(), "unique");
  EXPECT_EQ(pb.launch().total(), 1);
  ASSERT_EQ(pb.launch().used_size(), 1);
  EXPECT_EQ(pb.launch().used(0).index(), 1);
  EXPECT_EQ(pb.launch().used(0).stream_id(), 1756);
  EXPECT_EQ(pb.launch().used(0).task_id(), 0);
  EXPECT_EQ(pb.launch().used(0).start_ns(), 1780676244313289000);
  EXPECT_DOUBLE_EQ(pb.launch().used(0).duration_us(), 87139.38);
  EXPECT_NE(pb.launch().used(0).where().find("op_summary_20260605161737.csv:"), std::string::npos);
  EXPECT_NE(pb.evidence_json().find("\"op_name\": \"main_kernel\""), std::string::npos);
}

}  // namespace
}  // namespace npuperf::evidence
