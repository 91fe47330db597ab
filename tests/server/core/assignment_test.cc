#include "server/core/assignment.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

// ---- DeviceMatches: one device against one collection's constraints ----

v1::DeviceConstraints Constraints(std::vector<std::string> socs,
                                  std::map<std::string, std::string> labels = {},
                                  const std::string& range = "") {
  v1::DeviceConstraints c;
  for (auto& s : socs) c.add_socs(s);
  for (auto& [k, v] : labels) (*c.mutable_host_labels())[k] = v;
  c.set_device_range(range);
  return c;
}

TEST(DeviceMatchesTest, NoConstraintsMatchEveryDevice) {
  EXPECT_TRUE(DeviceMatches(Constraints({}), {7, "Ascend910B2"}, {}));
}

TEST(DeviceMatchesTest, SocMustBeOneOfTheListed) {
  const auto c = Constraints({"Ascend910B2", "Ascend910B3"});
  EXPECT_TRUE(DeviceMatches(c, {0, "Ascend910B3"}, {}));
  EXPECT_FALSE(DeviceMatches(c, {0, "Ascend950PR_9589"}, {}));
}

TEST(DeviceMatchesTest, EveryHostLabelMustMatchExactly) {
  const auto c = Constraints({}, {{"rack", "r1"}, {"pool", "ci"}});
  EXPECT_TRUE(DeviceMatches(c, {0, "x"}, {{"rack", "r1"}, {"pool", "ci"}, {"extra", "y"}}));
  EXPECT_FALSE(DeviceMatches(c, {0, "x"}, {{"rack", "r1"}}));                  // pool missing
  EXPECT_FALSE(DeviceMatches(c, {0, "x"}, {{"rack", "r2"}, {"pool", "ci"}}));  // other value
}

TEST(DeviceMatchesTest, HostMustBeTheOfferingAgentsHost) {
  v1::DeviceConstraints c;
  c.set_host("h2");
  c.set_device_range("0");
  EXPECT_TRUE(DeviceMatches(c, {0, "x", "h2"}, {}));
  EXPECT_FALSE(DeviceMatches(c, {0, "x", "h1"}, {}));
  EXPECT_FALSE(DeviceMatches(c, {1, "x", "h2"}, {}));
  v1::AgentStatus other;
  other.set_host("h1");
  other.set_state("online");
  other.add_devices()->set_device_id(0);
  const Unplaceable why = WhyUnplaceable(c, std::vector<v1::AgentStatus>{other});
  EXPECT_EQ(why.kind, "host");
  EXPECT_EQ(why.reason, "no online agent runs on host h2");
}

TEST(DeviceMatchesTest, DeviceIdMustLieInTheRange) {
  const auto c = Constraints({}, {}, "0-3,6");
  EXPECT_TRUE(DeviceMatches(c, {2, "x"}, {}));
  EXPECT_TRUE(DeviceMatches(c, {6, "x"}, {}));
  EXPECT_FALSE(DeviceMatches(c, {4, "x"}, {}));
  EXPECT_FALSE(DeviceMatches(Constraints({}, {}, "3-1"), {2, "x"}, {})) << "bad range: nothing";
}

// ---- ChooseClaim: the pure matching policy ----

struct Candidates {
  std::vector<v1::CollectionSpec> specs;
  std::vector<ClaimCandidate> list;
  void Add(const std::string& team, int priority, int collection_active, int team_active,
           int cap = 8, const std::string& soc = "") {
    v1::CollectionSpec spec;
    spec.set_max_concurrent_jobs(cap);
    if (!soc.empty()) spec.mutable_constraints()->add_socs(soc);
    specs.push_back(spec);
    ClaimCandidate c;
    c.job_id = static_cast<int64_t>(list.size()) + 1;
    c.team = team;
    c.priority = priority;
    c.collection_active = collection_active;
    c.team_active = team_active;
    list.push_back(c);
  }
  const std::vector<ClaimCandidate>& Get() {
    for (size_t i = 0; i < list.size(); ++i) list[i].spec = &specs[i];
    return list;
  }
};

const std::vector<OfferedDevice> kDevices = {{0, "Ascend910B2"}, {1, "Ascend950PR_9589"}};

TEST(ChooseClaimTest, HigherPriorityTierFirst) {
  Candidates c;
  c.Add("a", 5, 0, 0);
  c.Add("b", 0, 0, 0);
  EXPECT_EQ(ChooseClaim(c.Get(), kDevices, {})->first, 0u);
}

TEST(ChooseClaimTest, FairShareInsideATier) {
  Candidates c;
  c.Add("big", 0, 3, 3);    // team with 3 running jobs, oldest job
  c.Add("small", 0, 0, 0);  // team with none
  EXPECT_EQ(ChooseClaim(c.Get(), kDevices, {})->first, 1u);
}

TEST(ChooseClaimTest, RespectsCapAndConstraints) {
  Candidates c;
  c.Add("a", 0, 2, 2, /*cap=*/2);
  c.Add("b", 0, 0, 0, 8, "Ascend950PR_9589");
  auto pick = ChooseClaim(c.Get(), kDevices, {});
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->first, 1u);
  EXPECT_EQ(pick->second, 1u);  // only device 1 has that SoC
  Candidates none;
  none.Add("a", 0, 0, 0, 8, "Ascend910_9392");
  EXPECT_FALSE(ChooseClaim(none.Get(), kDevices, {}));
}

TEST(ChooseClaimTest, FairShareNeverReachesALowerTier) {
  Candidates c;
  c.Add("busy", 5, 1, 6);  // higher tier, a team with many active jobs
  c.Add("idle", 0, 0, 0);  // lower tier, an idle team
  EXPECT_EQ(ChooseClaim(c.Get(), kDevices, {})->first, 0u);
}

TEST(ChooseClaimTest, EqualShareKeepsTheOldestJob) {
  Candidates c;
  c.Add("a", 0, 1, 1);
  c.Add("b", 0, 1, 1);
  EXPECT_EQ(ChooseClaim(c.Get(), kDevices, {})->first, 0u);
}

TEST(ChooseClaimTest, AnUnmatchedTopTierFallsThroughToTheNext) {
  Candidates c;
  c.Add("a", 5, 0, 0, 8, "Ascend910_9392");  // no offered device has it
  c.Add("b", 5, 4, 4, /*cap=*/4);            // at its cap
  c.Add("c", 0, 0, 0);
  EXPECT_EQ(ChooseClaim(c.Get(), kDevices, {})->first, 2u);
}

TEST(ChooseClaimTest, TakesTheFirstMatchingDevice) {
  Candidates c;
  c.Add("a", 0, 0, 0);
  auto pick = ChooseClaim(c.Get(), {{3, "Ascend910B2"}, {1, "Ascend910B2"}}, {});
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->second, 0u);
  EXPECT_FALSE(ChooseClaim(c.Get(), {}, {})) << "no device offered";
  EXPECT_FALSE(ChooseClaim({}, kDevices, {})) << "no candidate";
}

// A claim of several leases counts each one before asking again: the live
// counts of the collection and of its whole team rise, so fair share and
// caps hold within one claim.
TEST(CountClaimedLeaseTest, RaisesTheCollectionAndEveryCandidateOfItsTeam) {
  Candidates c;
  c.Add("big", 0, 1, 3);
  c.Add("big", 0, 2, 3);
  c.Add("small", 0, 0, 0);
  for (size_t i = 0; i < c.list.size(); ++i) c.list[i].collection_id = absl::StrCat("c", i);
  CountClaimedLease(c.list, 0);
  EXPECT_EQ(absl::StrCat(c.list[0].collection_active, "/", c.list[0].team_active, " ",
                         c.list[1].collection_active, "/", c.list[1].team_active, " ",
                         c.list[2].collection_active, "/", c.list[2].team_active),
            "2/4 2/4 0/0");
}

TEST(CountClaimedLeaseTest, SharesOneClaimsDevicesBetweenTeams) {
  Candidates c;
  c.Add("a", 0, 0, 0);
  c.Add("b", 0, 0, 0);
  for (size_t i = 0; i < c.list.size(); ++i) c.list[i].collection_id = absl::StrCat("c", i);
  std::vector<size_t> picks;
  for (int k = 0; k < 4; ++k) {
    auto pick = ChooseClaim(c.Get(), kDevices, {});
    ASSERT_TRUE(pick);
    picks.push_back(pick->first);
    CountClaimedLease(c.list, pick->first);
  }
  EXPECT_EQ(picks, (std::vector<size_t>{0, 1, 0, 1}));
}

}  // namespace
}  // namespace npuperf::server
