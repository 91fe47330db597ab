#include "server/core/claims_in_flight.h"

#include <optional>

#include "gtest/gtest.h"
#include "server/core/assignment.h"

namespace npuperf::server {
namespace {

ClaimCandidate Candidate(const std::string& collection, const std::string& team, int64_t job,
                         const v1::CollectionSpec* spec) {
  ClaimCandidate c;
  c.job_id = job;
  c.collection_id = collection;
  c.team = team;
  c.spec = spec;
  return c;
}

TEST(ClaimsInFlightTest, PicksInFlightCountAsLiveJobsOfTheirCollectionAndTeamUntilTheyGo) {
  ClaimsInFlight in_flight;
  v1::CollectionSpec spec;
  const std::vector<ClaimCandidate> heads = {Candidate("a", "t1", 1, &spec),
                                             Candidate("b", "t1", 2, &spec),
                                             Candidate("c", "t2", 3, &spec)};
  {
    auto first = in_flight.Start(heads[0]);
    auto second = in_flight.Start(heads[0]);
    std::optional<ClaimsInFlight::Pick> moved(in_flight.Start(heads[2]));
    std::vector<ClaimCandidate> seen = heads;
    in_flight.CountInto(seen);
    EXPECT_EQ(seen[0].collection_active, 2);
    EXPECT_EQ(seen[1].collection_active, 0);
    EXPECT_EQ(seen[2].collection_active, 1);
    EXPECT_EQ(seen[0].team_active, 2);
    EXPECT_EQ(seen[1].team_active, 2) << "the team's picks count for all its collections";
    EXPECT_EQ(seen[2].team_active, 1);
    moved.reset();
    seen = heads;
    in_flight.CountInto(seen);
    EXPECT_EQ(seen[2].collection_active, 0) << "a pick counts only while in flight";
  }
  std::vector<ClaimCandidate> after = heads;
  in_flight.CountInto(after);
  for (const ClaimCandidate& c : after) {
    EXPECT_EQ(c.collection_active, 0);
    EXPECT_EQ(c.team_active, 0);
  }
}

// What it is for: claims that read the same heads, one of them in flight,
// go to different collections once the first fills its collection's cap.
TEST(ClaimsInFlightTest, AConcurrentClaimPassesOverACollectionItsPicksInFlightFill) {
  ClaimsInFlight in_flight;
  v1::CollectionSpec spec;
  spec.set_max_concurrent_jobs(1);
  spec.mutable_constraints()->add_socs("Ascend910B2");
  const std::vector<ClaimCandidate> heads = {Candidate("old", "t", 1, &spec),
                                             Candidate("new", "t", 2, &spec)};
  const std::vector<OfferedDevice> devices = {{0, "Ascend910B2", "h"}};
  std::vector<ClaimCandidate> first_view = heads;
  in_flight.CountInto(first_view);
  auto first = ChooseClaim(first_view, devices, {});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->first, 0u);
  const ClaimsInFlight::Pick flying = in_flight.Start(first_view[first->first]);
  std::vector<ClaimCandidate> second_view = heads;  // read before the first lease
  in_flight.CountInto(second_view);
  auto second = ChooseClaim(second_view, devices, {});
  ASSERT_TRUE(second);
  EXPECT_EQ(second_view[second->first].collection_id, "new");
}

// The counts only steer: a counted pick may yet lease nothing (its
// collection locked or drained), so when they leave the chooser nothing it
// would find without them, the claim chooses without them.
TEST(ClaimsInFlightTest, PicksInFlightSteerTheChooserButNeverLeaveItNothingToPick) {
  ClaimsInFlight in_flight;
  v1::CollectionSpec spec;
  spec.set_max_concurrent_jobs(1);
  const std::vector<OfferedDevice> devices = {{0, "Ascend910B2", "h"}};
  const std::vector<ClaimCandidate> heads = {Candidate("old", "t", 1, &spec),
                                             Candidate("new", "t", 2, &spec)};
  EXPECT_EQ(in_flight.Steer(heads, devices, {}, ChooseClaim)[0].collection_active, 0)
      << "nothing in flight: as they are";
  const ClaimsInFlight::Pick on_old = in_flight.Start(heads[0]);
  std::vector<ClaimCandidate> steered = in_flight.Steer(heads, devices, {}, ChooseClaim);
  EXPECT_EQ(steered[0].collection_active, 1);
  auto pick = ChooseClaim(steered, devices, {});
  ASSERT_TRUE(pick);
  EXPECT_EQ(steered[pick->first].collection_id, "new");
  // Only "old" left: counted, it is full and nothing could be picked.
  const std::vector<ClaimCandidate> only_old = {heads[0]};
  steered = in_flight.Steer(only_old, devices, {}, ChooseClaim);
  EXPECT_EQ(steered[0].collection_active, 0);
  EXPECT_TRUE(ChooseClaim(steered, devices, {}));
  // Nothing fits either way (another SoC): counted, as nothing is lost.
  const std::vector<OfferedDevice> other = {{0, "Ascend310P3", "h"}};
  spec.mutable_constraints()->add_socs("Ascend910B2");
  EXPECT_EQ(in_flight.Steer(only_old, other, {}, ChooseClaim)[0].collection_active, 1);
}

}  // namespace
}  // namespace npuperf::server
