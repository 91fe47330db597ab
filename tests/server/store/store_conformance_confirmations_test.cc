// Store conformance: confirmations (migration 0015, compare/confirmations.h). One confirmation per
// pair of rounds that is not UNCONFIRMED; an UNCONFIRMED one may be asked for anew; a team sees
// only its own; every update is a compare-and-set on the version, and only PENDING ones are listed
// for the reaper.
#include <string>

#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

ConfirmationRecord Pending(const std::string& team, int64_t baseline, int64_t candidate) {
  ConfirmationRecord c;
  c.team = team;
  c.options.set_alpha(0.05);
  c.confirmation.set_baseline_round_id(baseline);
  c.confirmation.set_candidate_round_id(candidate);
  c.confirmation.set_operator_name("op");
  c.confirmation.set_original_verdict(v1::VERDICT_REGRESSED);
  c.confirmation.set_state(v1::CONFIRMATION_STATE_PENDING);
  c.confirmation.add_steps()->set_side("baseline");
  c.confirmation.add_steps()->set_side("candidate");
  return c;
}

TEST_P(StoreConformanceTest, ConfirmationOfAPairIsCreatedOnceAndReadBackWhole) {
  ASSERT_OK_AND_ASSIGN(first, store_->InsertConfirmation(Pending("alpha", 1, 2), 1000));
  EXPECT_TRUE(first.second);
  EXPECT_GT(first.first.confirmation.id(), 0);
  EXPECT_EQ(first.first.version, 1);
  ASSERT_OK_AND_ASSIGN(again, store_->InsertConfirmation(Pending("alpha", 1, 2), 2000));
  EXPECT_FALSE(again.second);
  EXPECT_EQ(again.first.confirmation.id(), first.first.confirmation.id());
  ASSERT_OK_AND_ASSIGN(read, store_->GetConfirmation("alpha", first.first.confirmation.id()));
  EXPECT_EQ(read.team, "alpha");
  EXPECT_DOUBLE_EQ(read.options.alpha(), 0.05);
  EXPECT_EQ(read.confirmation.steps_size(), 2);
  EXPECT_EQ(read.confirmation.steps(1).side(), "candidate");
  EXPECT_EQ(read.confirmation.operator_name(), "op");
  // Another pair, or the same pair of another team, is another confirmation.
  ASSERT_OK_AND_ASSIGN(other, store_->InsertConfirmation(Pending("alpha", 2, 1), 1000));
  EXPECT_TRUE(other.second);
  ASSERT_OK_AND_ASSIGN(beta, store_->InsertConfirmation(Pending("beta", 1, 2), 1000));
  EXPECT_TRUE(beta.second);
}

TEST_P(StoreConformanceTest, ConfirmationOfAnotherTeamIsNotFound) {
  ASSERT_OK_AND_ASSIGN(made, store_->InsertConfirmation(Pending("alpha", 1, 2), 1000));
  const int64_t id = made.first.confirmation.id();
  EXPECT_TRUE(absl::IsNotFound(store_->GetConfirmation("beta", id).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->GetConfirmation("alpha", id + 100).status()));
  EXPECT_TRUE(store_->GetConfirmation("", id).ok());  // the server's own reads: any team
  ConfirmationRecord moved = made.first;
  moved.team = "beta";
  EXPECT_TRUE(absl::IsNotFound(store_->UpdateConfirmation(moved, 2000).status()));
}

TEST_P(StoreConformanceTest, ConfirmationUpdateIsACompareAndSetOnTheVersion) {
  ASSERT_OK_AND_ASSIGN(made, store_->InsertConfirmation(Pending("alpha", 1, 2), 1000));
  ConfirmationRecord next = made.first;
  next.confirmation.mutable_steps(0)->set_collection_id("c-1");
  ASSERT_OK_AND_ASSIGN(stored, store_->UpdateConfirmation(next, 2000));
  EXPECT_EQ(stored.version, 2);
  // A writer that read version 1 loses, and writes nothing.
  ConfirmationRecord stale = made.first;
  stale.confirmation.set_state(v1::CONFIRMATION_STATE_UNCONFIRMED);
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->UpdateConfirmation(stale, 3000).status()));
  ASSERT_OK_AND_ASSIGN(read, store_->GetConfirmation("alpha", made.first.confirmation.id()));
  EXPECT_EQ(read.version, 2);
  EXPECT_EQ(read.confirmation.state(), v1::CONFIRMATION_STATE_PENDING);
  EXPECT_EQ(read.confirmation.steps(0).collection_id(), "c-1");
}

TEST_P(StoreConformanceTest, ConfirmationPendingAreListedOldestFirstAndTerminalOnesAreNot) {
  ASSERT_OK_AND_ASSIGN(a, store_->InsertConfirmation(Pending("alpha", 1, 2), 1000));
  ASSERT_OK_AND_ASSIGN(b, store_->InsertConfirmation(Pending("beta", 3, 4), 1000));
  ASSERT_OK_AND_ASSIGN(c, store_->InsertConfirmation(Pending("alpha", 5, 6), 1000));
  ConfirmationRecord done = b.first;
  done.confirmation.set_state(v1::CONFIRMATION_STATE_CONFIRMED);
  ASSERT_TRUE(store_->UpdateConfirmation(done, 2000).ok());
  ASSERT_OK_AND_ASSIGN(pending, store_->ListPendingConfirmations(10));
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].confirmation.id(), a.first.confirmation.id());
  EXPECT_EQ(pending[1].confirmation.id(), c.first.confirmation.id());
  ASSERT_OK_AND_ASSIGN(one, store_->ListPendingConfirmations(1));
  EXPECT_EQ(one.size(), 1u);
}

TEST_P(StoreConformanceTest, ConfirmationUnconfirmedPairMayBeAskedForAnew) {
  ASSERT_OK_AND_ASSIGN(made, store_->InsertConfirmation(Pending("alpha", 1, 2), 1000));
  ConfirmationRecord gave_up = made.first;
  gave_up.confirmation.set_state(v1::CONFIRMATION_STATE_UNCONFIRMED);
  gave_up.confirmation.set_reason("no device");
  ASSERT_TRUE(store_->UpdateConfirmation(gave_up, 2000).ok());
  ASSERT_OK_AND_ASSIGN(anew, store_->InsertConfirmation(Pending("alpha", 1, 2), 3000));
  EXPECT_TRUE(anew.second);
  EXPECT_NE(anew.first.confirmation.id(), made.first.confirmation.id());
  // The old one is kept as it ended.
  ASSERT_OK_AND_ASSIGN(old, store_->GetConfirmation("alpha", made.first.confirmation.id()));
  EXPECT_EQ(old.confirmation.reason(), "no device");
  // A confirmation stored UNCONFIRMED at once does not block the pair either.
  ConfirmationRecord refused = Pending("alpha", 7, 8);
  refused.confirmation.set_state(v1::CONFIRMATION_STATE_UNCONFIRMED);
  ASSERT_OK_AND_ASSIGN(r1, store_->InsertConfirmation(refused, 1000));
  ASSERT_OK_AND_ASSIGN(r2, store_->InsertConfirmation(Pending("alpha", 7, 8), 1000));
  EXPECT_TRUE(r1.second);
  EXPECT_TRUE(r2.second);
}

}  // namespace
}  // namespace npuperf::server
