// The agents domain's pure rules: what each caller sees of ListAgents (the
// lease rule both store backends apply is in job_rules_test.cc).
#include "server/core/agent_rules.h"

#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

// Host h1 (labels rack=r1) with device 0 running team alpha's job 7 and
// device 1 running team beta's job 8; host h2 idle.
std::vector<AgentRecord> TwoHosts() {
  std::vector<AgentRecord> out(2);
  v1::AgentStatus& a = out[0].status;
  a.set_agent_id("a1");
  a.set_host("h1");
  (*a.mutable_labels())["rack"] = "r1";
  for (int d = 0; d < 2; ++d) {
    auto* dev = a.add_devices();
    dev->set_device_id(d);
    dev->set_soc("Ascend910B2");
    dev->set_state("busy");
    dev->set_job_id(7 + d);
  }
  out[0].job_teams = {"alpha", "beta"};
  v1::AgentStatus& b = out[1].status;
  b.set_agent_id("a2");
  b.set_host("h2");
  b.add_devices()->set_soc("Ascend950PR_9589");
  out[1].job_teams = {""};
  return out;
}

TEST(ViewAgentsTest, ATeamSeesDevicesAndStatesButNotOtherTeamsJobsOrHosts) {
  Principal alpha{PrincipalKind::kTeam, "alpha"};
  const v1::ListAgentsResponse seen =
      ViewAgents(TwoHosts(), AgentsViewer::Of(alpha, /*auth_required=*/true));
  ASSERT_EQ(seen.agents_size(), 2);
  const v1::AgentStatus& a = seen.agents(0);
  EXPECT_EQ(a.agent_id(), "a1");
  EXPECT_EQ(a.host(), "");
  EXPECT_TRUE(a.labels().empty());
  ASSERT_EQ(a.devices_size(), 2);
  EXPECT_EQ(a.devices(0).soc(), "Ascend910B2");
  EXPECT_EQ(a.devices(0).state(), "busy");
  EXPECT_EQ(a.devices(0).job_id(), 7);  // its own job
  EXPECT_EQ(a.devices(1).state(), "busy");
  EXPECT_EQ(a.devices(1).job_id(), 0);  // beta's job: hidden
  EXPECT_EQ(seen.agents(1).devices(0).soc(), "Ascend950PR_9589");
}

TEST(ViewAgentsTest, AnAgentTokenSeesAllOfItsOwnHostOnly) {
  Principal h1{PrincipalKind::kAgent, "h1"};
  const v1::ListAgentsResponse seen =
      ViewAgents(TwoHosts(), AgentsViewer::Of(h1, /*auth_required=*/true));
  ASSERT_EQ(seen.agents_size(), 1);
  EXPECT_EQ(seen.agents(0).host(), "h1");
  EXPECT_EQ(seen.agents(0).devices(1).job_id(), 8);
}

TEST(ViewAgentsTest, DevelopmentModeSeesEverything) {
  const v1::ListAgentsResponse seen =
      ViewAgents(TwoHosts(), AgentsViewer::Of(Principal{}, /*auth_required=*/false));
  ASSERT_EQ(seen.agents_size(), 2);
  EXPECT_EQ(seen.agents(0).host(), "h1");
  EXPECT_EQ(seen.agents(0).labels().at("rack"), "r1");
  EXPECT_EQ(seen.agents(0).devices(1).job_id(), 8);
}

v1::Heartbeat BeatWith(v1::DeviceState d0, v1::DeviceState d1) {
  v1::Heartbeat hb;
  hb.set_agent_id("a");
  auto* a = hb.add_devices();
  a->set_device_id(0);
  a->set_state(d0);
  auto* b = hb.add_devices();
  b->set_device_id(1);
  b->set_state(d1);
  return hb;
}

TEST(SeenWriteDueTest, AHeartbeatWritesOnlyWhatChangedOrWhatIsOld) {
  const v1::Heartbeat idle = BeatWith(v1::DEVICE_STATE_IDLE, v1::DEVICE_STATE_IDLE);
  const SeenWrite written = SeenWrite::Of(idle.devices(), 1'000);
  EXPECT_TRUE(SeenWriteDue(nullptr, idle, 1'000, 10'000)) << "nothing remembered: write";
  EXPECT_FALSE(SeenWriteDue(&written, idle, 1'000, 10'000));
  EXPECT_FALSE(SeenWriteDue(&written, idle, 10'999, 10'000)) << "younger than the refresh";
  EXPECT_TRUE(SeenWriteDue(&written, idle, 11'000, 10'000)) << "as old as the refresh";
  EXPECT_TRUE(SeenWriteDue(&written, idle, 999, 10'000)) << "a clock stepped back";
  EXPECT_TRUE(SeenWriteDue(
      &written, BeatWith(v1::DEVICE_STATE_IDLE, v1::DEVICE_STATE_EXTERNALLY_LOCKED), 1'001, 10'000))
      << "a device changed state";
  EXPECT_FALSE(
      SeenWriteDue(&written, BeatWith(v1::DEVICE_STATE_BUSY, v1::DEVICE_STATE_IDLE), 1'001, 10'000))
      << "BUSY (one of our jobs: its lease says so) is stored as IDLE";
  v1::Heartbeat more = idle;
  more.add_devices()->set_device_id(2);
  EXPECT_TRUE(SeenWriteDue(&written, more, 1'001, 10'000)) << "a device never written";
  v1::Heartbeat fewer = idle;
  fewer.mutable_devices()->RemoveLast();
  EXPECT_FALSE(SeenWriteDue(&written, fewer, 1'001, 10'000)) << "a device not listed is kept";
}

TEST(SeenWriteDueTest, OnlyBusyIsStoredAsAnotherState) {
  EXPECT_EQ(StoredDeviceState(v1::DEVICE_STATE_BUSY), v1::DEVICE_STATE_IDLE);
  for (v1::DeviceState s : {v1::DEVICE_STATE_UNSPECIFIED, v1::DEVICE_STATE_IDLE,
                            v1::DEVICE_STATE_EXTERNALLY_LOCKED, v1::DEVICE_STATE_UNHEALTHY}) {
    EXPECT_EQ(StoredDeviceState(s), s);
  }
}

TEST(SeenWriteDueTest, TheRefreshIsTenSecondsOrAQuarterOfAShorterRetention) {
  EXPECT_EQ(SeenRefreshMs(7LL * 24 * 3600 * 1000), 10'000);
  EXPECT_EQ(SeenRefreshMs(40'000), 10'000);
  EXPECT_EQ(SeenRefreshMs(8'000), 2'000);
  EXPECT_EQ(SeenRefreshMs(0), 1);
  EXPECT_EQ(SeenRefreshMs(-5), 1);
}

}  // namespace
}  // namespace npuperf::server
