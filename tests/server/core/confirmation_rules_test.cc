// The decisions of a confirmation (core/confirmation_rules.h): where it reruns, what it does next,
// and what the reruns say about the verdict.
#include "server/core/confirmation_rules.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

v1::DevicePlacement At(const std::string& host, int device) {
  v1::DevicePlacement p;
  p.set_host(host);
  p.set_device_id(device);
  p.set_soc("Ascend910B2");
  return p;
}

// An online agent on host with devices 0..states.size()-1 in those states.
v1::AgentStatus Agent(const std::string& host, const std::vector<std::string>& states,
                      const std::string& soc = "Ascend910B2") {
  v1::AgentStatus a;
  a.set_agent_id("a-" + host);
  a.set_host(host);
  a.set_state("online");
  for (size_t i = 0; i < states.size(); ++i) {
    auto* d = a.add_devices();
    d->set_device_id(static_cast<int>(i));
    d->set_soc(soc);
    d->set_state(states[i]);
  }
  return a;
}

TEST(ConfirmationRulesTest, RerunsOnAnotherHostBeforeAnotherDeviceOfTheSameHost) {
  const auto got =
      ChooseRerunDevice("Ascend910B2", {At("h1", 0), At("h1", 1)},
                        {Agent("h1", {"idle", "idle", "idle"}), Agent("h2", {"busy"})});
  ASSERT_TRUE(got.device.has_value()) << got.reason;
  EXPECT_EQ(got.device->host(), "h2");
  EXPECT_EQ(got.device->device_id(), 0);
  EXPECT_EQ(got.device->agent_id(), "a-h2");
}

TEST(ConfirmationRulesTest, NeverRerunsOnAnOriginalDevice) {
  const auto got = ChooseRerunDevice("Ascend910B2", {At("h1", 0), At("h1", 2)},
                                     {Agent("h1", {"idle", "busy", "idle"})});
  ASSERT_TRUE(got.device.has_value()) << got.reason;
  EXPECT_EQ(got.device->host(), "h1");
  EXPECT_EQ(got.device->device_id(), 1);
}

TEST(ConfirmationRulesTest, PrefersAnIdleDeviceThenTheLowestHostAndId) {
  const auto got =
      ChooseRerunDevice("Ascend910B2", {At("h1", 0), At("h1", 1)},
                        {Agent("h3", {"busy", "idle"}), Agent("h2", {"busy", "idle", "idle"})});
  ASSERT_TRUE(got.device.has_value());
  EXPECT_EQ(got.device->host(), "h2");
  EXPECT_EQ(got.device->device_id(), 1);
}

TEST(ConfirmationRulesTest, SkipsOtherSocsUnhealthyDevicesAndLostAgents) {
  v1::AgentStatus lost = Agent("h4", {"idle"});
  lost.set_state("lost");
  const auto got = ChooseRerunDevice(
      "Ascend910B2", {At("h1", 0), At("h1", 1)},
      {Agent("h1", {"idle", "idle"}), Agent("h2", {"unhealthy", "externally_locked", "offline"}),
       Agent("h3", {"idle"}, "Ascend950PR_9589"), lost});
  EXPECT_FALSE(got.device.has_value());
  EXPECT_TRUE(absl::StrContains(got.reason, "SoC Ascend910B2")) << got.reason;
  EXPECT_TRUE(absl::StrContains(got.reason, "h1 device 0 and h1 device 1")) << got.reason;
}

TEST(ConfirmationRulesTest, StepsAlternateBaselineFirst) {
  const auto steps = RerunSteps(2);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[0].side(), kBaselineSide);
  EXPECT_EQ(steps[1].side(), kCandidateSide);
  EXPECT_EQ(steps[2].side(), kBaselineSide);
  EXPECT_EQ(steps[3].side(), kCandidateSide);
}

TEST(ConfirmationRulesTest, NextMoveSubmitsWaitsGivesUpAndEvaluatesInStepOrder) {
  v1::Confirmation c;
  for (auto& s : RerunSteps(1)) *c.add_steps() = s;
  EXPECT_EQ(NextConfirmationMove(c).kind, ConfirmationMove::kSubmit);
  EXPECT_EQ(NextConfirmationMove(c).step, 0);
  c.mutable_steps(0)->set_collection_id("c-1");
  c.mutable_steps(0)->set_state(v1::COLLECTION_STATE_RUNNING);
  EXPECT_EQ(NextConfirmationMove(c).kind, ConfirmationMove::kWait);
  c.mutable_steps(0)->set_state(v1::COLLECTION_STATE_SUCCEEDED);
  EXPECT_EQ(NextConfirmationMove(c).kind, ConfirmationMove::kSubmit);
  EXPECT_EQ(NextConfirmationMove(c).step, 1);
  c.mutable_steps(1)->set_collection_id("c-2");
  c.mutable_steps(1)->set_state(v1::COLLECTION_STATE_CANCELLED);
  EXPECT_EQ(NextConfirmationMove(c).kind, ConfirmationMove::kGiveUp);
  EXPECT_EQ(NextConfirmationMove(c).step, 1);
  EXPECT_EQ(StepName(c, 1), "candidate rerun 1 of 1");
  c.mutable_steps(1)->set_state(v1::COLLECTION_STATE_SUCCEEDED);
  EXPECT_EQ(NextConfirmationMove(c).kind, ConfirmationMove::kEvaluate);
}

TEST(ConfirmationRulesTest, TheSameVerdictConfirmsAnotherOneDoesNotAndNoVerdictLeavesItOpen) {
  v1::RoundComparison rerun;
  rerun.set_verdict(v1::VERDICT_REGRESSED);
  rerun.set_rule("p=0.001<0.01 and +9.8%>=2%");
  auto same = DecideConfirmation(v1::VERDICT_REGRESSED, rerun);
  EXPECT_EQ(same.state, v1::CONFIRMATION_STATE_CONFIRMED);
  EXPECT_TRUE(absl::StrContains(same.reason, "REGRESSED (p=0.001")) << same.reason;
  rerun.set_verdict(v1::VERDICT_STABLE);
  auto stable = DecideConfirmation(v1::VERDICT_REGRESSED, rerun);
  EXPECT_EQ(stable.state, v1::CONFIRMATION_STATE_NOT_CONFIRMED);
  EXPECT_TRUE(absl::StrContains(stable.reason, "not REGRESSED")) << stable.reason;
  rerun.set_verdict(v1::VERDICT_IMPROVED);
  EXPECT_EQ(DecideConfirmation(v1::VERDICT_REGRESSED, rerun).state,
            v1::CONFIRMATION_STATE_NOT_CONFIRMED);
  for (v1::Verdict none :
       {v1::VERDICT_INSUFFICIENT, v1::VERDICT_NOT_COMPARABLE, v1::VERDICT_ERRORED}) {
    rerun.set_verdict(none);
    EXPECT_EQ(DecideConfirmation(v1::VERDICT_IMPROVED, rerun).state,
              v1::CONFIRMATION_STATE_UNCONFIRMED);
  }
  EXPECT_TRUE(Confirmable(v1::VERDICT_IMPROVED));
  EXPECT_FALSE(Confirmable(v1::VERDICT_STABLE));
}

}  // namespace
}  // namespace npuperf::server
