// Store conformance: regressions and their triage (issue 20; core/triage_rules.h). A key has at
// most one current regression; listings open, touch and close it; a person's triage is a
// compare-and-set on the state they saw, recorded with who, when and why; another team's
// regression does not exist for a team.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "server/core/triage_rules.h"
#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

RegressionKey KeyOf(const std::string& team, const std::string& op = "add") {
  return {team, op, "p0", "branch=main", kDurationRule};
}

RegressionObservation Seen(const RegressionKey& k, bool regressed, int64_t round) {
  return {k, regressed, round};
}

RegressionTriage Move(const std::string& team, int64_t id, v1::RegressionState expected,
                      v1::RegressionState next, int64_t now_ms, const std::string& note = "") {
  RegressionTriage t;
  t.team = team;
  t.id = id;
  t.expected = expected;
  t.next = next;
  t.note = note;
  t.now_ms = now_ms;
  return t;
}

// The current regression of k after one observation (id 0: none).
RegressionRecord ObserveOne(Store& store, const RegressionObservation& o, int64_t now_ms) {
  auto got = store.ObserveRegressions({o}, now_ms);
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() && got->size() == 1 ? (*got)[0] : RegressionRecord();
}

TEST_P(StoreConformanceTest, ARegressedCaseOpensOneRegressionThatLaterListingsTouch) {
  const RegressionKey k = KeyOf("alpha");
  const RegressionRecord first = ObserveOne(*store_, Seen(k, true, 10), 1000);
  ASSERT_GT(first.id, 0);
  EXPECT_EQ(first.state, v1::REGRESSION_STATE_DETECTED);
  EXPECT_EQ(first.detected_ms, 1000);
  EXPECT_EQ(first.first_round_id, 10);
  EXPECT_EQ(first.seen_rounds, 1);
  EXPECT_EQ(first.ended_ms, 0);
  // The same round listed again: seen later, but not one more round.
  const RegressionRecord again = ObserveOne(*store_, Seen(k, true, 10), 2000);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(again.last_seen_ms, 2000);
  EXPECT_EQ(again.seen_rounds, 1);
  // The next night's round.
  const RegressionRecord next = ObserveOne(*store_, Seen(k, true, 11), 3000);
  EXPECT_EQ(next.id, first.id);
  EXPECT_EQ(next.last_round_id, 11);
  EXPECT_EQ(next.first_round_id, 10);
  EXPECT_EQ(next.seen_rounds, 2);
  EXPECT_EQ(next.detected_ms, 1000);
  // Another operator, another baseline or another team is another regression.
  EXPECT_NE(ObserveOne(*store_, Seen(KeyOf("alpha", "mul"), true, 12), 3000).id, first.id);
  RegressionKey dev = k;
  dev.baseline_label = "branch=dev";
  EXPECT_NE(ObserveOne(*store_, Seen(dev, true, 12), 3000).id, first.id);
  EXPECT_NE(ObserveOne(*store_, Seen(KeyOf("beta"), true, 13), 3000).id, first.id);
  ASSERT_OK_AND_ASSIGN(detail, store_->GetRegression("alpha", first.id));
  ASSERT_EQ(detail.transitions.size(), 1u);
  EXPECT_EQ(detail.transitions[0].from, v1::REGRESSION_STATE_UNSPECIFIED);
  EXPECT_EQ(detail.transitions[0].to, v1::REGRESSION_STATE_DETECTED);
  EXPECT_EQ(detail.transitions[0].actor, kTriageSystemActor);
  EXPECT_EQ(detail.transitions[0].at_ms, 1000);
}

TEST_P(StoreConformanceTest, AStableCaseClosesItsOpenRegressionAsFixedAndALaterOneIsNew) {
  const RegressionKey k = KeyOf("alpha");
  // Stable without a regression: nothing.
  EXPECT_EQ(ObserveOne(*store_, Seen(k, false, 9), 900).id, 0);
  const RegressionRecord r = ObserveOne(*store_, Seen(k, true, 10), 1000);
  ASSERT_TRUE(store_
                  ->TriageRegression(Move("alpha", r.id, v1::REGRESSION_STATE_DETECTED,
                                          v1::REGRESSION_STATE_ACKNOWLEDGED, 1500, "on it"))
                  .ok());
  EXPECT_EQ(ObserveOne(*store_, Seen(k, false, 11), 2000).id, 0);
  ASSERT_OK_AND_ASSIGN(closed, store_->GetRegression("alpha", r.id));
  EXPECT_EQ(closed.regression.state, v1::REGRESSION_STATE_FIXED);
  EXPECT_EQ(closed.regression.ended_ms, 2000);
  ASSERT_EQ(closed.transitions.size(), 3u);
  EXPECT_EQ(closed.transitions[2].from, v1::REGRESSION_STATE_ACKNOWLEDGED);
  EXPECT_EQ(closed.transitions[2].to, v1::REGRESSION_STATE_FIXED);
  EXPECT_EQ(closed.transitions[2].actor, kTriageSystemActor);
  const RegressionRecord reborn = ObserveOne(*store_, Seen(k, true, 12), 3000);
  EXPECT_GT(reborn.id, r.id);
  EXPECT_EQ(reborn.state, v1::REGRESSION_STATE_DETECTED);
  EXPECT_EQ(reborn.seen_rounds, 1);
}

TEST_P(StoreConformanceTest, AWontFixRegressionStaysQuietUntilTheCaseIsStableThenEnds) {
  const RegressionKey k = KeyOf("alpha");
  const RegressionRecord r = ObserveOne(*store_, Seen(k, true, 10), 1000);
  ASSERT_TRUE(store_
                  ->TriageRegression(Move("alpha", r.id, v1::REGRESSION_STATE_DETECTED,
                                          v1::REGRESSION_STATE_WONT_FIX, 1100, "accepted"))
                  .ok());
  const RegressionRecord touched = ObserveOne(*store_, Seen(k, true, 11), 2000);
  EXPECT_EQ(touched.id, r.id);
  EXPECT_EQ(touched.state, v1::REGRESSION_STATE_WONT_FIX);
  EXPECT_EQ(ObserveOne(*store_, Seen(k, false, 12), 3000).id, 0);
  ASSERT_OK_AND_ASSIGN(ended, store_->GetRegression("alpha", r.id));
  EXPECT_EQ(ended.regression.state, v1::REGRESSION_STATE_WONT_FIX);  // the person's verdict
  EXPECT_EQ(ended.regression.ended_ms, 3000);
  EXPECT_EQ(ended.transitions.size(), 2u);  // ending is no state change
  EXPECT_NE(ObserveOne(*store_, Seen(k, true, 13), 4000).id, r.id);
}

TEST_P(StoreConformanceTest, TriageIsACompareAndSetRecordedWithWhoWhenAndWhy) {
  const RegressionRecord r = ObserveOne(*store_, Seen(KeyOf("alpha"), true, 10), 1000);
  ASSERT_OK_AND_ASSIGN(
      ack, store_->TriageRegression(Move("alpha", r.id, v1::REGRESSION_STATE_DETECTED,
                                         v1::REGRESSION_STATE_ACKNOWLEDGED, 2000, "looking")));
  EXPECT_EQ(ack.state, v1::REGRESSION_STATE_ACKNOWLEDGED);
  EXPECT_TRUE(ack.confirmed);
  // A second person who read DETECTED loses, told the current state.
  const absl::Status stale =
      store_
          ->TriageRegression(Move("alpha", r.id, v1::REGRESSION_STATE_DETECTED,
                                  v1::REGRESSION_STATE_FALSE_POSITIVE, 2100))
          .status();
  EXPECT_TRUE(absl::IsFailedPrecondition(stale)) << stale;
  EXPECT_TRUE(absl::StrContains(stale.message(), "is ACKNOWLEDGED, not DETECTED")) << stale;
  // Backwards is not a move.
  const absl::Status back =
      store_
          ->TriageRegression(Move("alpha", r.id, v1::REGRESSION_STATE_ACKNOWLEDGED,
                                  v1::REGRESSION_STATE_DETECTED, 2200))
          .status();
  EXPECT_TRUE(absl::IsFailedPrecondition(back)) << back;
  ASSERT_OK_AND_ASSIGN(
      fixed, store_->TriageRegression(Move("alpha", r.id, v1::REGRESSION_STATE_ACKNOWLEDGED,
                                           v1::REGRESSION_STATE_FIXED, 3000)));
  EXPECT_EQ(fixed.ended_ms, 3000);
  // Closed is final.
  EXPECT_TRUE(absl::IsFailedPrecondition(
      store_
          ->TriageRegression(
              Move("alpha", r.id, v1::REGRESSION_STATE_FIXED, v1::REGRESSION_STATE_WONT_FIX, 3100))
          .status()));
  ASSERT_OK_AND_ASSIGN(detail, store_->GetRegression("alpha", r.id));
  ASSERT_EQ(detail.transitions.size(), 3u);
  EXPECT_EQ(detail.transitions[1].actor, "alpha");
  EXPECT_EQ(detail.transitions[1].note, "looking");
  EXPECT_EQ(detail.transitions[1].at_ms, 2000);
  EXPECT_EQ(detail.transitions[2].from, v1::REGRESSION_STATE_ACKNOWLEDGED);
  EXPECT_EQ(detail.transitions[2].to, v1::REGRESSION_STATE_FIXED);
  // FIXED by a person ended it: the next detection is a new regression.
  EXPECT_NE(ObserveOne(*store_, Seen(KeyOf("alpha"), true, 11), 4000).id, r.id);
}

TEST_P(StoreConformanceTest, AnotherTeamsRegressionIsNotFound) {
  const RegressionRecord r = ObserveOne(*store_, Seen(KeyOf("alpha"), true, 10), 1000);
  EXPECT_TRUE(absl::IsNotFound(store_->GetRegression("beta", r.id).status()));
  EXPECT_TRUE(
      absl::IsNotFound(store_
                           ->TriageRegression(Move("beta", r.id, v1::REGRESSION_STATE_DETECTED,
                                                   v1::REGRESSION_STATE_WONT_FIX, 2000))
                           .status()));
  EXPECT_TRUE(absl::IsNotFound(store_->GetRegression("alpha", r.id + 100).status()));
  ASSERT_OK_AND_ASSIGN(still, store_->GetRegression("alpha", r.id));
  EXPECT_EQ(still.regression.state, v1::REGRESSION_STATE_DETECTED);
}

TEST_P(StoreConformanceTest, ConcurrentTriagesOfOneRegressionHaveExactlyOneWinner) {
  UseSqliteFile();
  const RegressionRecord r = ObserveOne(*store_, Seen(KeyOf("alpha"), true, 10), 1000);
  ASSERT_OK_AND_ASSIGN(replica, OpenStore());
  const v1::RegressionState targets[] = {v1::REGRESSION_STATE_ACKNOWLEDGED,
                                         v1::REGRESSION_STATE_FIXED, v1::REGRESSION_STATE_WONT_FIX,
                                         v1::REGRESSION_STATE_FALSE_POSITIVE};
  std::atomic<int> won{0}, lost{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      Store& s = i % 2 == 0 ? *store_ : *replica;
      const absl::Status st = s.TriageRegression(Move("alpha", r.id, v1::REGRESSION_STATE_DETECTED,
                                                      targets[i % 4], 2000 + i))
                                  .status();
      if (st.ok()) {
        ++won;
      } else if (absl::IsFailedPrecondition(st) &&
                 absl::StrContains(st.message(), "not DETECTED")) {
        ++lost;
      } else {
        ADD_FAILURE() << st;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(lost.load(), 7);
  ASSERT_OK_AND_ASSIGN(detail, store_->GetRegression("alpha", r.id));
  EXPECT_EQ(detail.transitions.size(), 2u);  // the detection and the one winner
}

TEST_P(StoreConformanceTest, RegressionCountsGroupByRuleStateAndConfirmation) {
  int64_t round = 10;
  std::vector<int64_t> ids;
  for (const char* op : {"a", "b", "c", "d"}) {
    ids.push_back(ObserveOne(*store_, Seen(KeyOf("alpha", op), true, ++round), 1000).id);
  }
  ObserveOne(*store_, Seen(KeyOf("beta"), true, ++round), 1000);
  using S = v1::RegressionState;
  auto move = [&](int64_t id, S from, S to) {
    EXPECT_TRUE(store_->TriageRegression(Move("alpha", id, from, to, 2000)).ok());
  };
  move(ids[0], v1::REGRESSION_STATE_DETECTED, v1::REGRESSION_STATE_FALSE_POSITIVE);
  move(ids[1], v1::REGRESSION_STATE_DETECTED, v1::REGRESSION_STATE_ACKNOWLEDGED);
  move(ids[2], v1::REGRESSION_STATE_DETECTED, v1::REGRESSION_STATE_ACKNOWLEDGED);
  move(ids[2], v1::REGRESSION_STATE_ACKNOWLEDGED, v1::REGRESSION_STATE_FALSE_POSITIVE);
  ASSERT_OK_AND_ASSIGN(alpha, store_->CountRegressions("alpha"));
  auto count = [](const std::vector<RegressionCount>& all, S state, bool confirmed) {
    int64_t n = 0;
    for (const auto& c : all) {
      if (c.rule == kDurationRule && c.state == state && c.confirmed == confirmed) n += c.count;
    }
    return n;
  };
  EXPECT_EQ(count(alpha, v1::REGRESSION_STATE_FALSE_POSITIVE, false), 2);
  EXPECT_EQ(count(alpha, v1::REGRESSION_STATE_ACKNOWLEDGED, true), 1);
  EXPECT_EQ(count(alpha, v1::REGRESSION_STATE_DETECTED, false), 1);
  ASSERT_OK_AND_ASSIGN(everyone, store_->CountRegressions(""));
  EXPECT_EQ(count(everyone, v1::REGRESSION_STATE_DETECTED, false), 2);
  const TriagedCounts t = TriagedByRule(alpha).at(kDurationRule);
  EXPECT_EQ(t.confirmed, 1);
  EXPECT_EQ(t.false_positives, 2);
}

}  // namespace
}  // namespace npuperf::server
