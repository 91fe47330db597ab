// The triage rules (core/triage_rules.h): when an observation opens, touches or closes a
// regression, which moves a person may make, and the precision formula.
#include "server/core/triage_rules.h"

#include <cmath>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "server/core/limits.h"

namespace npuperf::server {
namespace {

using S = v1::RegressionState;
constexpr S kDetected = v1::REGRESSION_STATE_DETECTED;
constexpr S kAck = v1::REGRESSION_STATE_ACKNOWLEDGED;
constexpr S kFixed = v1::REGRESSION_STATE_FIXED;
constexpr S kWontFix = v1::REGRESSION_STATE_WONT_FIX;
constexpr S kFalsePositive = v1::REGRESSION_STATE_FALSE_POSITIVE;
constexpr S kStates[] = {
    v1::REGRESSION_STATE_UNSPECIFIED, kDetected, kAck, kFixed, kWontFix, kFalsePositive};

RegressionRecord InState(S s) {
  RegressionRecord r;
  r.id = 7;
  r.state = s;
  return r;
}

TEST(TriageRulesTest, ObservationsOpenTouchAndCloseTheCurrentRegression) {
  EXPECT_EQ(DecideObservation(nullptr, true), ObservationAction::kOpen);
  EXPECT_EQ(DecideObservation(nullptr, false), ObservationAction::kNothing);
  for (S s : {kDetected, kAck, kWontFix, kFalsePositive}) {
    const RegressionRecord r = InState(s);
    EXPECT_EQ(DecideObservation(&r, true), ObservationAction::kTouch) << s;
  }
  const RegressionRecord detected = InState(kDetected), ack = InState(kAck);
  EXPECT_EQ(DecideObservation(&detected, false), ObservationAction::kCloseFixed);
  EXPECT_EQ(DecideObservation(&ack, false), ObservationAction::kCloseFixed);
  const RegressionRecord wont = InState(kWontFix), fp = InState(kFalsePositive);
  EXPECT_EQ(DecideObservation(&wont, false), ObservationAction::kEnd);
  EXPECT_EQ(DecideObservation(&fp, false), ObservationAction::kEnd);
}

RegressionObservation Seen(bool regressed, int64_t round_id) {
  RegressionObservation o;
  o.key = {"team-a", "rmsnorm", "c1", "branch=main", kDurationRule};
  o.regressed = regressed;
  o.round_id = round_id;
  return o;
}

TEST(TriageRulesTest, AnObservationOfANewRegressionOpensItDetectedWithItsFirstTransition) {
  const ObservationOutcome out = ApplyObservation(nullptr, Seen(true, 40), 1000);
  EXPECT_EQ(out.action, ObservationAction::kOpen);
  EXPECT_EQ(out.record.id, 0);  // the backend assigns it
  EXPECT_EQ(out.record.key.operator_name, "rmsnorm");
  EXPECT_EQ(out.record.state, kDetected);
  EXPECT_EQ(out.record.detected_ms, 1000);
  EXPECT_EQ(out.record.last_seen_ms, 1000);
  EXPECT_EQ(out.record.first_round_id, 40);
  EXPECT_EQ(out.record.last_round_id, 40);
  EXPECT_EQ(out.record.seen_rounds, 1);
  EXPECT_EQ(out.record.ended_ms, 0);
  ASSERT_TRUE(out.transition.has_value());
  EXPECT_EQ(out.transition->from, v1::REGRESSION_STATE_UNSPECIFIED);
  EXPECT_EQ(out.transition->to, kDetected);
  EXPECT_EQ(out.transition->actor, kTriageSystemActor);
  EXPECT_EQ(out.transition->note, "regressed in round 40");
  EXPECT_EQ(out.Current().state, kDetected);
}

TEST(TriageRulesTest, SeeingARegressionAgainCountsANewRoundOnceAndKeepsItsState) {
  RegressionRecord r = InState(kAck);
  r.last_round_id = 40;
  r.seen_rounds = 1;
  ObservationOutcome same = ApplyObservation(&r, Seen(true, 40), 2000);
  EXPECT_EQ(same.action, ObservationAction::kTouch);
  EXPECT_EQ(same.record.seen_rounds, 1);
  EXPECT_EQ(same.record.last_seen_ms, 2000);
  EXPECT_FALSE(same.transition.has_value());
  ObservationOutcome next = ApplyObservation(&same.record, Seen(true, 41), 3000);
  EXPECT_EQ(next.record.seen_rounds, 2);
  EXPECT_EQ(next.record.last_round_id, 41);
  EXPECT_EQ(next.record.state, kAck);
  EXPECT_EQ(next.Current().id, 7);
}

TEST(TriageRulesTest, ACaseFineAgainClosesAnOpenRegressionAsFixedAndEndsAClosedOneAsItIs) {
  const RegressionRecord ack = InState(kAck);
  const ObservationOutcome fixed = ApplyObservation(&ack, Seen(false, 42), 5000);
  EXPECT_EQ(fixed.action, ObservationAction::kCloseFixed);
  EXPECT_EQ(fixed.record.state, v1::REGRESSION_STATE_FIXED);
  EXPECT_EQ(fixed.record.ended_ms, 5000);
  ASSERT_TRUE(fixed.transition.has_value());
  EXPECT_EQ(fixed.transition->from, kAck);
  EXPECT_EQ(fixed.transition->to, v1::REGRESSION_STATE_FIXED);
  EXPECT_EQ(fixed.transition->note, "no longer regressed in round 42");
  EXPECT_EQ(fixed.Current().id, 0);  // no current regression any more

  const RegressionRecord fp = InState(kFalsePositive);
  const ObservationOutcome ended = ApplyObservation(&fp, Seen(false, 42), 5000);
  EXPECT_EQ(ended.action, ObservationAction::kEnd);
  EXPECT_EQ(ended.record.state, kFalsePositive);
  EXPECT_EQ(ended.record.ended_ms, 5000);
  EXPECT_FALSE(ended.transition.has_value());

  const ObservationOutcome nothing = ApplyObservation(nullptr, Seen(false, 42), 5000);
  EXPECT_EQ(nothing.action, ObservationAction::kNothing);
  EXPECT_EQ(nothing.Current().id, 0);
}

TEST(TriageRulesTest, OnlyDetectedFailsBotsAndOnlyWontFixAndFalsePositiveAreHidden) {
  for (S s : kStates) {
    EXPECT_EQ(FailsBots(s), s == kDetected) << s;
    EXPECT_EQ(HiddenByDefault(s), s == kWontFix || s == kFalsePositive) << s;
    EXPECT_EQ(IsOpen(s), s == kDetected || s == kAck) << s;
  }
}

TEST(TriageRulesTest, TransitionsGoForwardOnly) {
  // Every (from, to) pair: legal exactly for the table of the header.
  for (S from : kStates) {
    for (S to : kStates) {
      const bool closing = to == kFixed || to == kWontFix || to == kFalsePositive;
      const bool legal =
          (from == kDetected && (closing || to == kAck)) || (from == kAck && closing);
      EXPECT_EQ(IsLegalTriage(from, to), legal) << from << " -> " << to;
    }
  }
}

TEST(TriageRulesTest, CheckTriageNamesTheCurrentStateToTheLoserOfARace) {
  const absl::Status stale = CheckTriage(InState(kAck), kDetected, kWontFix);
  EXPECT_TRUE(absl::IsFailedPrecondition(stale));
  EXPECT_EQ(stale.message(),
            "regression 7 is ACKNOWLEDGED, not DETECTED (it changed since it "
            "was read)");
  const absl::Status illegal = CheckTriage(InState(kFixed), kFixed, kAck);
  EXPECT_TRUE(absl::IsFailedPrecondition(illegal));
  EXPECT_TRUE(absl::StrContains(illegal.message(), "is FIXED and cannot become ACKNOWLEDGED"));
  EXPECT_TRUE(CheckTriage(InState(kDetected), kDetected, kFalsePositive).ok());
}

TEST(TriageRulesTest, ApplyTriageConfirmsEndsAndRetracts) {
  const RegressionRecord ack = ApplyTriage(InState(kDetected), kAck, 500);
  EXPECT_TRUE(ack.confirmed);
  EXPECT_EQ(ack.ended_ms, 0);
  const RegressionRecord fixed = ApplyTriage(ack, kFixed, 900);
  EXPECT_TRUE(fixed.confirmed);
  EXPECT_EQ(fixed.ended_ms, 900);
  const RegressionRecord fp = ApplyTriage(ack, kFalsePositive, 900);
  EXPECT_FALSE(fp.confirmed);  // the person changed their mind
  EXPECT_EQ(fp.ended_ms, 0);   // it ends when the case is stable again
}

TEST(TriageRulesTest, PrecisionIsConfirmedOverTriagedAndUnknownWithoutAny) {
  EXPECT_TRUE(std::isnan(RulePrecision(0, 0)));
  EXPECT_DOUBLE_EQ(RulePrecision(3, 1), 0.75);
  EXPECT_DOUBLE_EQ(RulePrecision(0, 2), 0.0);
  const auto by_rule = TriagedByRule({{kDurationRule, kFalsePositive, false, 2},
                                      {kDurationRule, kAck, true, 3},
                                      {kDurationRule, kFixed, false, 5},  // closed by a STABLE
                                      {kDurationRule, kDetected, false, 4}});
  ASSERT_EQ(by_rule.count(kDurationRule), 1u);
  EXPECT_EQ(by_rule.at(kDurationRule).confirmed, 3);
  EXPECT_EQ(by_rule.at(kDurationRule).false_positives, 2);
  EXPECT_EQ(TriagedByRule({}).size(), std::size(kRegressionRules));
}

TEST(TriageRulesTest, StateNamesDropThePrefix) {
  EXPECT_EQ(RegressionStateName(kWontFix), "WONT_FIX");
  EXPECT_EQ(RegressionStateName(static_cast<S>(42)), "STATE_42");
}

}  // namespace
}  // namespace npuperf::server
