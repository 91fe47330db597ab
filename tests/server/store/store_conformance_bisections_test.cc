// Store conformance: bisections (issue 34; migration 0019, compare/bisections.h). One bisection
// per team and idempotency key; a team sees only its own (the server's own reads, team empty, see
// every team's); listings are newest first and hold only unfinished ones unless asked; every
// update is a compare-and-set on the version.
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

BisectionRecord Started(const std::string& team, const std::string& key) {
  BisectionRecord b;
  b.team = team;
  b.idempotency_key = key;
  b.bisection.set_repository("git@example.com:ops.git");
  b.bisection.set_operator_name("op");
  b.bisection.set_case_id("c1");
  b.bisection.set_metric("duration");
  b.bisection.set_state(v1::BISECTION_STATE_MEASURING_ENDS);
  b.bisection.add_revisions()->set_commit(std::string(40, 'a'));
  b.bisection.add_revisions()->set_commit(std::string(40, 'b'));
  b.bisection.set_max_runs(32);
  return b;
}

// The ids of records, in order.
std::vector<int64_t> Ids(const std::vector<BisectionRecord>& records) {
  std::vector<int64_t> ids;
  for (const BisectionRecord& b : records) ids.push_back(b.bisection.id());
  return ids;
}

TEST_P(StoreConformanceTest, BisectionIsInsertedAtVersionOneAndReadBackWhole) {
  ASSERT_OK_AND_ASSIGN(made, store_->InsertBisection(Started("alpha", "k1"), 1000));
  EXPECT_TRUE(made.second);
  EXPECT_GT(made.first.bisection.id(), 0);
  EXPECT_EQ(made.first.version, 1);
  EXPECT_EQ(made.first.team, "alpha");
  EXPECT_EQ(made.first.idempotency_key, "k1");
  ASSERT_OK_AND_ASSIGN(read, store_->GetBisection("alpha", made.first.bisection.id()));
  EXPECT_EQ(read.team, "alpha");
  EXPECT_EQ(read.idempotency_key, "k1");
  EXPECT_EQ(read.version, 1);
  EXPECT_EQ(read.bisection.id(), made.first.bisection.id());
  EXPECT_EQ(read.bisection.repository(), "git@example.com:ops.git");
  EXPECT_EQ(read.bisection.state(), v1::BISECTION_STATE_MEASURING_ENDS);
  ASSERT_EQ(read.bisection.revisions_size(), 2);
  EXPECT_EQ(read.bisection.revisions(1).commit(), std::string(40, 'b'));
  EXPECT_EQ(read.bisection.max_runs(), 32);
}

TEST_P(StoreConformanceTest, BisectionSameKeyOfTheSameTeamReturnsTheOneStartedAndInsertsNothing) {
  ASSERT_OK_AND_ASSIGN(first, store_->InsertBisection(Started("alpha", "k1"), 1000));
  BisectionRecord different = Started("alpha", "k1");
  different.bisection.set_repository("elsewhere");
  different.bisection.set_max_runs(99);
  ASSERT_OK_AND_ASSIGN(again, store_->InsertBisection(different, 2000));
  EXPECT_FALSE(again.second);
  EXPECT_EQ(again.first.bisection.id(), first.first.bisection.id());
  EXPECT_EQ(again.first.version, 1);
  EXPECT_EQ(again.first.idempotency_key, "k1");
  // The body of the second start is ignored.
  EXPECT_EQ(again.first.bisection.repository(), "git@example.com:ops.git");
  EXPECT_EQ(again.first.bisection.max_runs(), 32);
  ASSERT_OK_AND_ASSIGN(all, store_->ListBisections("alpha", /*include_finished=*/true, 10));
  EXPECT_EQ(all.size(), 1u);
}

TEST_P(StoreConformanceTest, BisectionReplicasStartingOneKeyAtOnceCreateOneAndAllReturnIt) {
  UseSqliteFile();
  ASSERT_OK_AND_ASSIGN(other, OpenStore());
  Store* replicas[2] = {store_.get(), other.get()};
  std::atomic<int> inserted{0};
  std::vector<int64_t> ids(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int attempt = 0; attempt < 5; ++attempt) {
        auto got = replicas[t % 2]->InsertBisection(Started("alpha", "k1"), 1000 + t);
        if (!got.ok() && absl::IsAborted(got.status())) continue;
        EXPECT_TRUE(got.ok()) << got.status();
        if (!got.ok()) return;
        if (got->second) ++inserted;
        ids[t] = got->first.bisection.id();
        return;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(inserted.load(), 1);
  for (int64_t id : ids) EXPECT_EQ(id, ids[0]);
  ASSERT_OK_AND_ASSIGN(all, store_->ListBisections("", true, 100));
  EXPECT_EQ(all.size(), 1u);
}

TEST_P(StoreConformanceTest, BisectionSameKeyOfAnotherTeamIsAnotherBisection) {
  ASSERT_OK_AND_ASSIGN(alpha, store_->InsertBisection(Started("alpha", "k1"), 1000));
  ASSERT_OK_AND_ASSIGN(beta, store_->InsertBisection(Started("beta", "k1"), 1000));
  EXPECT_TRUE(beta.second);
  EXPECT_NE(beta.first.bisection.id(), alpha.first.bisection.id());
  ASSERT_OK_AND_ASSIGN(other_key, store_->InsertBisection(Started("alpha", "k2"), 1000));
  EXPECT_TRUE(other_key.second);
}

TEST_P(StoreConformanceTest, BisectionOfAnotherTeamIsNotFoundAndAnEmptyTeamReadsAnyTeams) {
  ASSERT_OK_AND_ASSIGN(made, store_->InsertBisection(Started("alpha", "k1"), 1000));
  const int64_t id = made.first.bisection.id();
  const auto of_beta = store_->GetBisection("beta", id);
  EXPECT_TRUE(absl::IsNotFound(of_beta.status())) << of_beta.status();
  EXPECT_TRUE(absl::IsNotFound(store_->GetBisection("alpha", id + 100).status()));
  ASSERT_OK_AND_ASSIGN(any, store_->GetBisection("", id));  // the server's own reads
  EXPECT_EQ(any.team, "alpha");
  EXPECT_EQ(any.idempotency_key, "k1");
}

TEST_P(StoreConformanceTest, BisectionsAreListedNewestFirstWithoutFinishedOnesUnlessAsked) {
  ASSERT_OK_AND_ASSIGN(a, store_->InsertBisection(Started("alpha", "a"), 1000));
  ASSERT_OK_AND_ASSIGN(b, store_->InsertBisection(Started("alpha", "b"), 1000));
  BisectionRecord refused = Started("alpha", "c");
  refused.bisection.set_state(v1::BISECTION_STATE_REFUSED);  // stored terminal at once
  ASSERT_OK_AND_ASSIGN(c, store_->InsertBisection(refused, 1000));
  BisectionRecord bisecting = Started("alpha", "d");
  bisecting.bisection.set_state(v1::BISECTION_STATE_BISECTING);
  ASSERT_OK_AND_ASSIGN(d, store_->InsertBisection(bisecting, 1000));
  BisectionRecord explaining = Started("alpha", "e");
  explaining.bisection.set_state(v1::BISECTION_STATE_EXPLAINING);
  ASSERT_OK_AND_ASSIGN(e, store_->InsertBisection(explaining, 1000));
  const int64_t ia = a.first.bisection.id(), ib = b.first.bisection.id(),
                ic = c.first.bisection.id(), id = d.first.bisection.id(),
                ie = e.first.bisection.id();

  ASSERT_OK_AND_ASSIGN(running, store_->ListBisections("alpha", false, 10));
  EXPECT_EQ(Ids(running), (std::vector<int64_t>{ie, id, ib, ia}));
  ASSERT_OK_AND_ASSIGN(all, store_->ListBisections("alpha", true, 10));
  EXPECT_EQ(Ids(all), (std::vector<int64_t>{ie, id, ic, ib, ia}));
  EXPECT_EQ(all[2].bisection.state(), v1::BISECTION_STATE_REFUSED);
  EXPECT_EQ(all[2].idempotency_key, "c");
  EXPECT_EQ(all[2].version, 1);
}

TEST_P(StoreConformanceTest, BisectionListingIsOfOneTeamOrEveryTeamsAndHonoursTheLimit) {
  ASSERT_OK_AND_ASSIGN(a, store_->InsertBisection(Started("alpha", "k1"), 1000));
  ASSERT_OK_AND_ASSIGN(b, store_->InsertBisection(Started("beta", "k1"), 1000));
  ASSERT_OK_AND_ASSIGN(c, store_->InsertBisection(Started("alpha", "k2"), 1000));
  const int64_t ia = a.first.bisection.id(), ib = b.first.bisection.id(),
                ic = c.first.bisection.id();

  ASSERT_OK_AND_ASSIGN(alpha, store_->ListBisections("alpha", false, 10));
  EXPECT_EQ(Ids(alpha), (std::vector<int64_t>{ic, ia}));
  ASSERT_OK_AND_ASSIGN(beta, store_->ListBisections("beta", true, 10));
  EXPECT_EQ(Ids(beta), (std::vector<int64_t>{ib}));
  EXPECT_EQ(beta[0].team, "beta");
  ASSERT_OK_AND_ASSIGN(gamma, store_->ListBisections("gamma", true, 10));
  EXPECT_TRUE(gamma.empty());
  ASSERT_OK_AND_ASSIGN(every, store_->ListBisections("", false, 10));  // the server's own reads
  EXPECT_EQ(Ids(every), (std::vector<int64_t>{ic, ib, ia}));

  ASSERT_OK_AND_ASSIGN(newest, store_->ListBisections("", true, 2));
  EXPECT_EQ(Ids(newest), (std::vector<int64_t>{ic, ib}));
  ASSERT_OK_AND_ASSIGN(none, store_->ListBisections("", true, 0));
  EXPECT_TRUE(none.empty());
  ASSERT_OK_AND_ASSIGN(negative, store_->ListBisections("", true, -1));
  EXPECT_TRUE(negative.empty());
}

TEST_P(StoreConformanceTest, BisectionUpdateIsACompareAndSetOnTheVersion) {
  ASSERT_OK_AND_ASSIGN(made, store_->InsertBisection(Started("alpha", "k1"), 1000));
  BisectionRecord next = made.first;
  next.bisection.set_state(v1::BISECTION_STATE_BISECTING);
  next.bisection.set_regression_id(7);
  next.bisection.add_steps()->set_collection_id("c-1");
  ASSERT_OK_AND_ASSIGN(stored, store_->UpdateBisection(next, 2000));
  EXPECT_EQ(stored.version, 2);
  EXPECT_EQ(stored.team, "alpha");
  EXPECT_EQ(stored.idempotency_key, "k1");
  EXPECT_EQ(stored.bisection.id(), made.first.bisection.id());
  // A writer that read version 1 loses, names both versions, and writes nothing.
  BisectionRecord stale = made.first;
  stale.bisection.set_state(v1::BISECTION_STATE_CANCELLED);
  const absl::Status lost = store_->UpdateBisection(stale, 3000).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(lost)) << lost;
  EXPECT_NE(lost.message().find("version 1"), absl::string_view::npos) << lost;
  EXPECT_NE(lost.message().find("now 2"), absl::string_view::npos) << lost;
  ASSERT_OK_AND_ASSIGN(read, store_->GetBisection("alpha", made.first.bisection.id()));
  EXPECT_EQ(read.version, 2);
  EXPECT_EQ(read.bisection.state(), v1::BISECTION_STATE_BISECTING);
  EXPECT_EQ(read.bisection.regression_id(), 7);
  ASSERT_EQ(read.bisection.steps_size(), 1);
  EXPECT_EQ(read.bisection.steps(0).collection_id(), "c-1");
  // The winner's version goes on.
  ASSERT_OK_AND_ASSIGN(third, store_->UpdateBisection(stored, 4000));
  EXPECT_EQ(third.version, 3);
}

TEST_P(StoreConformanceTest, BisectionUpdateOfAnUnknownOrAnotherTeamsIsNotFound) {
  ASSERT_OK_AND_ASSIGN(made, store_->InsertBisection(Started("alpha", "k1"), 1000));
  BisectionRecord unknown = made.first;
  unknown.bisection.set_id(made.first.bisection.id() + 100);
  EXPECT_TRUE(absl::IsNotFound(store_->UpdateBisection(unknown, 2000).status()));
  BisectionRecord moved = made.first;
  moved.team = "beta";
  moved.bisection.set_state(v1::BISECTION_STATE_CANCELLED);
  EXPECT_TRUE(absl::IsNotFound(store_->UpdateBisection(moved, 2000).status()));
  ASSERT_OK_AND_ASSIGN(read, store_->GetBisection("alpha", made.first.bisection.id()));
  EXPECT_EQ(read.version, 1);
  EXPECT_EQ(read.bisection.state(), v1::BISECTION_STATE_MEASURING_ENDS);
}

TEST_P(StoreConformanceTest, BisectionUpdatedToDoneLeavesTheUnfinishedListing) {
  ASSERT_OK_AND_ASSIGN(a, store_->InsertBisection(Started("alpha", "a"), 1000));
  ASSERT_OK_AND_ASSIGN(b, store_->InsertBisection(Started("alpha", "b"), 1000));
  BisectionRecord done = a.first;
  done.bisection.set_state(v1::BISECTION_STATE_DONE);
  done.bisection.set_reason("culprit found");
  ASSERT_TRUE(store_->UpdateBisection(done, 2000).ok());
  ASSERT_OK_AND_ASSIGN(running, store_->ListBisections("alpha", false, 10));
  EXPECT_EQ(Ids(running), (std::vector<int64_t>{b.first.bisection.id()}));
  ASSERT_OK_AND_ASSIGN(all, store_->ListBisections("alpha", true, 10));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].bisection.id(), a.first.bisection.id());
  EXPECT_EQ(all[1].bisection.state(), v1::BISECTION_STATE_DONE);
  EXPECT_EQ(all[1].bisection.reason(), "culprit found");
  EXPECT_EQ(all[1].version, 2);
}

}  // namespace
}  // namespace npuperf::server
