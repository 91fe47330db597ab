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

}  // namespace
}  // namespace npuperf::server
