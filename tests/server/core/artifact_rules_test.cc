// Per-team artifact retention (server/core/artifact_rules.h): the flag's
// text and the sweep passes of one retention run.
#include "server/core/artifact_rules.h"

#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

using std::chrono::hours;

TEST(ArtifactRulesTest, FlagNamesTeamAgeAndOptionalQuota) {
  auto p = ParseTeamArtifactPolicy("perf-team=7d,2048");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->team, "perf-team");
  EXPECT_EQ(p->retention, hours(24 * 7));
  EXPECT_EQ(p->quota_bytes, int64_t{2048} << 20);
  auto never = ParseTeamArtifactPolicy("t=never");
  ASSERT_TRUE(never.ok());
  EXPECT_EQ(never->retention.count(), 0);
  EXPECT_FALSE(never->quota_bytes.has_value()) << "the global quota stays";
  EXPECT_EQ(ParseTeamArtifactPolicy("t=1h,0")->quota_bytes, 0) << "0: no quota";
}

TEST(ArtifactRulesTest, BadFlagValuesNameTheFlag) {
  for (const char* bad :
       {"", "team", "=7d", "t=", "t=7x", "t=0s", "t=7d,", "t=7d,-1", "t=7d,x", "t=7d,2000000000"}) {
    auto p = ParseTeamArtifactPolicy(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << bad;
    EXPECT_EQ(p.status().message().rfind("--artifact-retention-team ", 0), 0u) << p.status();
  }
  auto twice = ParseTeamArtifactPolicies({"a=1d", "b=2d", "a=3d"});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("team a named twice"), std::string::npos);
}

TEST(ArtifactRulesTest, SweepPlanHasAPassPerTeamThenTheOthers) {
  std::map<std::string, TeamArtifactPolicy> teams;
  teams["a"] = TeamArtifactPolicy{"a", hours(1), std::nullopt};
  teams["keep"] = TeamArtifactPolicy{"keep", hours(0), std::nullopt};
  const int64_t now = 100 * 3'600'000;
  const auto plan = PlanArtifactSweep(hours(24), teams, now);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].scope.team, "a");
  EXPECT_EQ(plan[0].created_before_ms, now - 3'600'000);
  EXPECT_EQ(plan[1].scope.team, "");
  EXPECT_EQ(plan[1].scope.except, (std::vector<std::string>{"a", "keep"}));
  EXPECT_EQ(plan[1].created_before_ms, now - 24 * 3'600'000);
  // With no default retention, only the teams' own passes run.
  const auto own = PlanArtifactSweep(hours(0), teams, now);
  ASSERT_EQ(own.size(), 1u);
  EXPECT_EQ(own[0].scope.team, "a");
  EXPECT_TRUE(PlanArtifactSweep(hours(0), {}, now).empty());
}

TEST(ArtifactRulesTest, QuotasListOnlyTeamsThatSetOne) {
  std::map<std::string, TeamArtifactPolicy> teams;
  teams["a"] = TeamArtifactPolicy{"a", hours(1), int64_t{5} << 20};
  teams["b"] = TeamArtifactPolicy{"b", hours(1), std::nullopt};
  EXPECT_EQ(TeamArtifactQuotas(teams), (std::map<std::string, int64_t>{{"a", int64_t{5} << 20}}));
}

}  // namespace
}  // namespace npuperf::server
