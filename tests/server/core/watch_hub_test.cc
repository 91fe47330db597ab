// WatchHub: one store read per change shared by every watcher of a
// collection, deltas instead of reloads, rereads on the clock, caps.
#include "server/core/watch_hub.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

using std::chrono::milliseconds;

// The calls one listener got, awaited by the test thread as they arrive.
class Recorder final : public WatchListener {
 public:
  void OnChange(std::shared_ptr<const WatchChange> change) override {
    absl::MutexLock lock(&mu_);
    changes_.push_back(std::move(change));
  }
  void OnStop() override {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }
  // Blocks until n changes arrived (event-driven, not timed).
  std::shared_ptr<const WatchChange> Await(size_t n) {
    absl::MutexLock lock(&mu_);
    auto arrived = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return changes_.size() >= n; };
    mu_.Await(absl::Condition(&arrived));
    return changes_[n - 1];
  }
  size_t size() {
    absl::MutexLock lock(&mu_);
    return changes_.size();
  }
  bool stopped() {
    absl::MutexLock lock(&mu_);
    return stopped_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::shared_ptr<const WatchChange>> changes_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

class WatchHubTest : public SchedulerFixture {
 protected:
  WatchHub& hub() { return scheduler_.watches(); }
  WatchHub::Subscription Watch(const std::string& id, std::shared_ptr<Recorder> r) {
    auto sub = hub().Subscribe("team", id, std::move(r));
    EXPECT_TRUE(sub.ok()) << sub.status();
    return sub.ok() ? *sub : WatchHub::Subscription();
  }
};

// Three watchers of one collection get the very same change object (one
// read for all), carrying only the job that changed.
TEST_F(WatchHubTest, OneReadPerChangeSharedByEveryWatcher) {
  const std::string id = Submit(3);
  const std::string agent = Register("h1");
  std::vector<std::shared_ptr<Recorder>> watchers;
  for (int i = 0; i < 3; ++i) {
    watchers.push_back(std::make_shared<Recorder>());
    EXPECT_EQ(Watch(id, watchers.back()).snapshot->jobs_size(), 3);
  }
  EXPECT_EQ(hub().watchers(), 3);
  auto a = Lease(agent, 0);
  ASSERT_TRUE(a);
  const auto change = watchers[0]->Await(1);
  EXPECT_EQ(watchers[1]->Await(1), change);
  EXPECT_EQ(watchers[2]->Await(1), change);
  ASSERT_EQ(change->changed.size(), 1u);
  const v1::Job& job = change->collection->jobs(change->changed[0]);
  EXPECT_EQ(job.id(), a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_LEASED);
  const auto delta = WatchEvent(*change, /*full=*/false, 2);
  EXPECT_EQ(delta.collection().jobs_size(), 0);
  EXPECT_EQ(delta.changed_jobs_size(), 1);
  EXPECT_EQ(delta.changed_job().id(), a->job_id());
  EXPECT_FALSE(delta.full_snapshot());
  const auto full = WatchEvent(*change, /*full=*/true, 3);
  EXPECT_EQ(full.collection().jobs_size(), 3);
  EXPECT_TRUE(full.full_snapshot());
}

// The terminal change is the last one: the hub lets its watchers go.
TEST_F(WatchHubTest, EndsAtTheTerminalChange) {
  const std::string id = Submit();
  const std::string agent = Register("h1");
  auto r = std::make_shared<Recorder>();
  Watch(id, r);
  auto a = Lease(agent, 0);
  ASSERT_TRUE(a);
  r->Await(1);
  ASSERT_TRUE(Succeed(*a, "u1", 12.5).ok());
  EXPECT_EQ(r->Await(2)->collection->state(), v1::COLLECTION_STATE_SUCCEEDED);
  EXPECT_EQ(hub().watchers(), 0);
  auto done = hub().Subscribe("team", id, r);  // terminal already: snapshot only
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->id, 0u);
  EXPECT_EQ(done->snapshot->state(), v1::COLLECTION_STATE_SUCCEEDED);
}

// What no notification reports (a change behind the scheduler's back) is
// seen on the reread, WatchOptions::reread on the clock after the last read.
TEST_F(WatchHubTest, RereadsOnTheClockWithoutANotification) {
  WatchOptions o;
  o.reread = std::chrono::seconds(30);
  WatchHub own(*store_, clock_, metrics_, o);
  const std::string id = Submit();
  auto r = std::make_shared<Recorder>();
  ASSERT_TRUE(own.Subscribe("team", id, r).ok());
  clock_.AwaitWaiters(1);
  ASSERT_TRUE(store_->CancelCollection("team", id, "behind its back", 0).ok());
  clock_.Advance(o.reread - milliseconds(1));
  EXPECT_EQ(r->size(), 0u);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(r->Await(1)->collection->state(), v1::COLLECTION_STATE_CANCELLED);
}

// Watches say why queued jobs wait, as GetCollection does, and send the
// change when an agent that can take them registers (seen on the next read).
TEST_F(WatchHubTest, SnapshotsAndDeltasCarryTheWaitingReason) {
  const std::string id = Submit(2);
  auto r = std::make_shared<Recorder>();
  auto sub = Watch(id, r);
  ASSERT_NE(sub.snapshot, nullptr);
  EXPECT_NE(sub.snapshot->waiting_reason(), "");  // no agent at all yet
  const std::string agent = Register("h1");
  auto a = Lease(agent, 0);
  ASSERT_TRUE(a);
  const auto change = r->Await(1);
  EXPECT_EQ(change->collection->waiting_reason(), "");  // one is queued, and h1 can take it
  EXPECT_EQ(WatchEvent(*change, /*full=*/false, 2).collection().waiting_reason(), "");
}

TEST_F(WatchHubTest, CapsStreamsPerTeamAndInTotal) {
  WatchOptions o;
  o.max_per_team = 2;
  o.max_total = 3;
  WatchHub own(*store_, clock_, metrics_, o);
  const std::string id = Submit();
  auto r = std::make_shared<Recorder>();
  auto first = own.Subscribe("team", id, r);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(own.Subscribe("team", id, r).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(own.Subscribe("team", id, r).status()));
  own.Unsubscribe(first->id);
  EXPECT_TRUE(own.Subscribe("team", id, r).ok());
  EXPECT_TRUE(absl::IsNotFound(own.Subscribe("other", id, r).status()));  // not theirs
  EXPECT_EQ(own.watchers(), 2);
}

TEST_F(WatchHubTest, StopEndsEveryWatcher) {
  WatchHub own(*store_, clock_, metrics_, WatchOptions());
  auto r = std::make_shared<Recorder>();
  ASSERT_TRUE(own.Subscribe("team", Submit(), r).ok());
  own.Stop();
  EXPECT_TRUE(r->stopped());
  EXPECT_EQ(own.watchers(), 0);
  EXPECT_TRUE(absl::IsUnavailable(own.Subscribe("team", Submit(), r).status()));
}

}  // namespace
}  // namespace npuperf::server
