#include "sim/fault.h"

#include "gtest/gtest.h"

namespace npuperf::sim {
namespace {

TEST(FaultTest, ParsesEveryKindAndQualifier) {
  auto f = ParseFaults(
      "fail:Memory:3; "
      "hang:30;crash;truncate;no_aicore_db;garbage;ratio_gt1:k;dvfs:800@dev=2@first=1");
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->size(), 8u);
  EXPECT_EQ((*f)[0].kind, FaultKind::kFail);
  EXPECT_EQ((*f)[0].group, "Memory");
  EXPECT_EQ((*f)[0].exit_code, 3);
  EXPECT_DOUBLE_EQ((*f)[1].seconds, 30);
  EXPECT_EQ((*f)[2].kind, FaultKind::kCrash);
  EXPECT_EQ((*f)[3].kind, FaultKind::kTruncate);
  EXPECT_EQ((*f)[4].kind, FaultKind::kNoAicoreDb);
  EXPECT_EQ((*f)[5].kind, FaultKind::kGarbage);
  EXPECT_EQ((*f)[6].op_name, "k");
  EXPECT_DOUBLE_EQ((*f)[7].mhz, 800);
  EXPECT_EQ((*f)[7].device, 2);
  EXPECT_EQ((*f)[7].first, 1);
  EXPECT_TRUE(ParseFaults("")->empty());
  auto slow = ParseFaults("slow:1.15@dev=1");
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ((*slow)[0].kind, FaultKind::kSlow);
  EXPECT_DOUBLE_EQ((*slow)[0].factor, 1.15);
  EXPECT_EQ((*slow)[0].device, 1);
  auto timeline = ParseFaults("timeline:serial;timeline:pipelined");
  ASSERT_TRUE(timeline.ok()) << timeline.status();
  EXPECT_EQ((*timeline)[0].kind, FaultKind::kTimeline);
  EXPECT_EQ((*timeline)[0].layout, "serial");
  EXPECT_EQ((*timeline)[1].layout, "pipelined");
}

TEST(FaultTest, RejectsMalformedItems) {
  for (const char* bad :
       {"fail:Memory", "fail:Memory:0", "fail:Memory:300", "hang", "hang:x", "dvfs:0", "slow",
        "slow:1", "slow:0.5", "slow:11", "explode", "crash:now", "crash@dev=x", "crash@when=1",
        "timeline", "timeline:overlapped", "timeline:serial:x"}) {
    EXPECT_FALSE(ParseFaults(bad).ok()) << bad;
  }
}

TEST(FaultTest, FiltersByDeviceGroupAndFirstN) {
  std::string state = ::testing::TempDir() + "/fault_state";
  std::filesystem::remove_all(state);
  auto f = *ParseFaults("fail:Memory:3;fail:*:4@dev=1;crash@first=2");
  auto on0 = ActiveFaults(f, 0, "PipeUtilization", state);
  ASSERT_EQ(on0.size(), 1u);
  EXPECT_EQ(on0[0].kind, FaultKind::kCrash);
  EXPECT_EQ(ActiveFaults(f, 1, "Memory", state).size(), 3u);  // crash run 2 of 2
  auto third = ActiveFaults(f, 1, "Memory", state);           // crash exhausted
  ASSERT_EQ(third.size(), 2u);
  EXPECT_EQ(FindFault(third, FaultKind::kCrash), nullptr);
  EXPECT_EQ(FindFault(third, FaultKind::kFail)->exit_code, 3);
}

}  // namespace
}  // namespace npuperf::sim
