// The no-double-book rule of the chaos checker (lease_history.h): leases of one device overlap
// when their times do, unless the store's event order shows the later one was written after the
// earlier one ended.
#include "tests/chaos/lease_history.h"

#include "gtest/gtest.h"

namespace npuperf::chaos {
namespace {

Lease Of(int64_t job, int attempt, int device, int64_t start_ms, int64_t start_event,
         int64_t end_ms, int64_t end_event, const std::string& end_kind = "job_result") {
  Lease l;
  l.job_id = job;
  l.attempt = attempt;
  l.host = "h1";
  l.device = device;
  l.start_ms = start_ms;
  l.start_event = start_event;
  l.end_ms = end_ms;
  l.end_event = end_event;
  l.end_kind = end_kind;
  return l;
}

TEST(OverlappingLeasesTest, LeasesOneAfterAnotherDoNotOverlap) {
  EXPECT_TRUE(
      OverlappingLeases({Of(1, 1, 3, 100, 1, 200, 2), Of(2, 1, 3, 200, 3, 300, 4)}, 1000).empty());
}

TEST(OverlappingLeasesTest, TwoLeasesOfOneDeviceAtOnceOverlap) {
  auto got = OverlappingLeases({Of(1, 1, 3, 100, 1, 300, 4), Of(2, 1, 3, 200, 2, 400, 5)}, 1000);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first.job_id, 1);
  EXPECT_EQ(got[0].second.job_id, 2);
}

TEST(OverlappingLeasesTest, OtherDevicesAndHostsNeverOverlap) {
  Lease other_host = Of(2, 1, 3, 200, 2, 400, 5);
  other_host.host = "h2";
  EXPECT_TRUE(OverlappingLeases(
                  {Of(1, 1, 3, 100, 1, 300, 4), Of(3, 1, 4, 200, 3, 400, 6), other_host}, 1000)
                  .empty());
}

// CI, seed 787452: a claim read its time (368) before the result of the job's attempt 1 (369)
// began, and leased its retry once that result committed: stamped 1 ms early, written after.
TEST(OverlappingLeasesTest, AClaimStampedBeforeTheResultItWaitedForIsNotADoubleBooking) {
  const Lease attempt1 = Of(27, 1, 3, 4640, 10, 9369, 20);
  const Lease attempt2 = Of(27, 2, 3, 9368, 21, 10607, 30);
  EXPECT_TRUE(OverlappingLeases({attempt1, attempt2}, 20000).empty());
  // Either lease stamped early: the other's end came first in the store.
  const Lease other_job = Of(28, 1, 3, 9000, 22, 12000, 31);
  EXPECT_TRUE(OverlappingLeases({attempt1, other_job}, 20000).empty());
}

TEST(OverlappingLeasesTest, ALeaseWrittenBeforeTheOtherEndedOverlapsEvenWhenStampedLater) {
  // Started by time after the end, but its event came first: the store leased a busy device.
  auto got = OverlappingLeases({Of(1, 1, 3, 100, 1, 300, 5), Of(2, 1, 3, 299, 4, 400, 6)}, 1000);
  EXPECT_EQ(got.size(), 1u);
}

TEST(OverlappingLeasesTest, AnOpenLeaseOrOneWithoutAnEndEventCountsByTimeOnly) {
  // Still open (end 0): it lasts until now.
  EXPECT_EQ(
      OverlappingLeases({Of(1, 1, 3, 100, 1, 0, 0, ""), Of(2, 1, 3, 500, 9, 600, 10)}, 1000).size(),
      1u);
  // Ended when its collection was cancelled (no event): no order to go by.
  EXPECT_EQ(OverlappingLeases(
                {Of(1, 1, 3, 100, 1, 300, 0, "finished"), Of(2, 1, 3, 299, 9, 600, 10)}, 1000)
                .size(),
            1u);
}

TEST(OverlappingLeasesTest, EveryOverlappingPairIsReportedNotOnlyTheLongestLease) {
  // A long lease, a short one inside it, and a third overlapping both.
  auto got = OverlappingLeases(
      {Of(1, 1, 3, 100, 1, 1000, 9), Of(2, 1, 3, 200, 2, 300, 4), Of(3, 1, 3, 250, 3, 400, 5)},
      5000);
  EXPECT_EQ(got.size(), 3u);
}

}  // namespace
}  // namespace npuperf::chaos
