#include "server/core/watch_hub.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "google/protobuf/util/message_differencer.h"
#include "server/core/assignment.h"
#include "server/core/job_state.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::MessageDifferencer;

// The hub's thread wakes at most this often for rereads (changes wake it
// at once), so idle watched collections cost one wake-up a second.
constexpr std::chrono::seconds kSweepPeriod{1};

// Indices of the jobs of `after` that are new or differ from `before`
// (both ordered by job id).
std::vector<int> ChangedJobs(const v1::Collection& before, const v1::Collection& after) {
  std::vector<int> out;
  int b = 0;
  for (int a = 0; a < after.jobs_size(); ++a) {
    const v1::Job& job = after.jobs(a);
    while (b < before.jobs_size() && before.jobs(b).id() < job.id()) ++b;
    if (b >= before.jobs_size() || before.jobs(b).id() != job.id() ||
        !MessageDifferencer::Equals(before.jobs(b), job)) {
      out.push_back(a);
    }
  }
  return out;
}

// The collection's own fields (state, counts, cancellation) differ.
bool CollectionChanged(const v1::Collection& before, const v1::Collection& after) {
  return before.state() != after.state() ||
         !MessageDifferencer::Equals(before.counts(), after.counts()) ||
         before.cancel_reason() != after.cancel_reason() ||
         before.waiting_reason() != after.waiting_reason() ||
         !MessageDifferencer::Equals(before.finished_at(), after.finished_at());
}

}  // namespace

v1::WatchCollectionResponse WatchEvent(const WatchChange& change, bool full, int64_t sequence) {
  v1::WatchCollectionResponse e;
  e.set_sequence(sequence);
  if (full) {
    *e.mutable_collection() = *change.collection;
    e.set_full_snapshot(true);
    return e;
  }
  v1::Collection* c = e.mutable_collection();
  c->set_id(change.collection->id());
  c->set_team(change.collection->team());
  *c->mutable_spec() = change.collection->spec();
  c->set_state(change.collection->state());
  *c->mutable_counts() = change.collection->counts();
  if (change.collection->has_created_at())
    *c->mutable_created_at() = change.collection->created_at();
  if (change.collection->has_finished_at()) {
    *c->mutable_finished_at() = change.collection->finished_at();
  }
  c->set_idempotency_key(change.collection->idempotency_key());
  c->set_cancel_reason(change.collection->cancel_reason());
  c->set_waiting_reason(change.collection->waiting_reason());
  for (int i : change.changed) *e.add_changed_jobs() = change.collection->jobs(i);
  if (e.changed_jobs_size() > 0) *e.mutable_changed_job() = e.changed_jobs(0);
  return e;
}

WatchHub::WatchHub(Store& store, Clock& clock, ServerMetrics& metrics, WatchOptions options)
    : store_(store), clock_(clock), metrics_(metrics), options_(options), thread_([this] {
        Run();
      }) {}

WatchHub::~WatchHub() { Stop(); }

absl::Status WatchHub::Admit(const std::string& team) {
  if (stopping_) return absl::UnavailableError("server is shutting down");
  if (per_team_[team] >= options_.max_per_team) {
    metrics_.refused.Add({{"reason", "watch_cap"}}).Increment();
    return absl::ResourceExhaustedError(
        absl::StrCat("team ", team, " holds ", options_.max_per_team,
                     " watch streams, its limit (--max-watches-per-team); close one first"));
  }
  if (static_cast<int>(watchers_.size()) >= options_.max_total) {
    metrics_.refused.Add({{"reason", "watch_cap"}}).Increment();
    return absl::ResourceExhaustedError(absl::StrCat("the server holds ", options_.max_total,
                                                     " watch streams, its limit (--max-watches)"));
  }
  return absl::OkStatus();
}

WatchHub::Subscription WatchHub::Register(const std::string& team, const std::string& collection_id,
                                          std::shared_ptr<WatchListener> listener,
                                          std::shared_ptr<const v1::Collection> fresh) {
  auto [it, created] = channels_.try_emplace(collection_id);
  Channel& ch = it->second;
  if (created) {
    ch.team = team;
    ch.latest = std::move(fresh);
    ch.next_read = clock_.MonotonicNow() + options_.reread;
    IndexJobs(collection_id, *ch.latest);
    dirty_.insert(collection_id);  // a change between the first read and now was not marked
  }
  const uint64_t id = next_id_++;
  ch.watchers.insert(id);
  watchers_[id] = Watcher{team, collection_id, std::move(listener)};
  ++per_team_[team];
  metrics_.watch_streams.Set(static_cast<double>(watchers_.size()));
  return Subscription{id, ch.latest};
}

absl::StatusOr<WatchHub::Subscription> WatchHub::Subscribe(
    const std::string& team, const std::string& collection_id,
    std::shared_ptr<WatchListener> listener) {
  {
    absl::MutexLock lock(&mu_);
    if (auto s = Admit(team); !s.ok()) return s;
    auto it = channels_.find(collection_id);
    if (it != channels_.end()) {
      if (it->second.team != team) {
        return absl::NotFoundError(absl::StrCat("collection ", collection_id, " not found"));
      }
      return Register(team, collection_id, std::move(listener), nullptr);
    }
  }
  // Not watched yet: the first watcher's read (outside the lock).
  auto c = Read(team, collection_id);
  if (!c.ok()) return c.status();
  auto fresh = std::make_shared<const v1::Collection>(*std::move(c));
  if (IsTerminal(fresh->state())) return Subscription{0, fresh};
  absl::MutexLock lock(&mu_);
  if (auto s = Admit(team); !s.ok()) return s;
  return Register(team, collection_id, std::move(listener), std::move(fresh));
}

absl::StatusOr<v1::Collection> WatchHub::Read(const std::string& team,
                                              const std::string& collection_id) {
  auto c = store_.GetCollection(team, collection_id);
  if (!c.ok()) return c;
  // Without the agents the collection is still worth sending.
  (void)FillWaitingReason(store_, &*c);
  return c;
}

void WatchHub::Unsubscribe(uint64_t id) {
  absl::MutexLock lock(&mu_);
  RemoveWatcher(id);
}

void WatchHub::RemoveWatcher(uint64_t id) {
  auto w = watchers_.find(id);
  if (w == watchers_.end()) return;
  if (--per_team_[w->second.team] <= 0) per_team_.erase(w->second.team);
  auto ch = channels_.find(w->second.collection_id);
  if (ch != channels_.end()) {
    ch->second.watchers.erase(id);
    if (ch->second.watchers.empty()) DropChannel(w->second.collection_id);
  }
  watchers_.erase(w);
  metrics_.watch_streams.Set(static_cast<double>(watchers_.size()));
}

void WatchHub::DropChannel(const std::string& collection_id) {
  auto ch = channels_.find(collection_id);
  if (ch == channels_.end()) return;
  for (const auto& job : ch->second.latest->jobs()) job_collection_.erase(job.id());
  channels_.erase(ch);
}

void WatchHub::IndexJobs(const std::string& collection_id, const v1::Collection& c) {
  for (const auto& job : c.jobs()) job_collection_[job.id()] = collection_id;
}

void WatchHub::Changed(const std::string& collection_id) {
  absl::MutexLock lock(&mu_);
  if (channels_.contains(collection_id)) dirty_.insert(collection_id);
}

void WatchHub::JobChanged(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  auto it = job_collection_.find(job_id);
  if (it != job_collection_.end()) dirty_.insert(it->second);
}

void WatchHub::ChangedAll() {
  absl::MutexLock lock(&mu_);
  if (!channels_.empty()) all_dirty_ = true;
}

int WatchHub::watchers() {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(watchers_.size());
}

void WatchHub::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  std::map<uint64_t, Watcher> gone;
  {
    absl::MutexLock lock(&mu_);
    gone.swap(watchers_);
    channels_.clear();
    job_collection_.clear();
    per_team_.clear();
    metrics_.watch_streams.Set(0);
  }
  for (auto& [id, w] : gone) w.listener->OnStop();
}

std::vector<std::string> WatchHub::TakeDue() {
  const Clock::MonotonicTime now = clock_.MonotonicNow();
  std::vector<std::string> due;
  for (const auto& [id, ch] : channels_) {
    if (all_dirty_ || dirty_.contains(id) || ch.next_read <= now) due.push_back(id);
  }
  all_dirty_ = false;
  dirty_.clear();
  return due;
}

void WatchHub::Run() {
  mu_.Lock();
  while (!stopping_) {
    const std::vector<std::string> due = TakeDue();
    if (due.empty() && channels_.empty()) {
      // Nothing watched: no timer at all (and no waiter on the clock).
      auto busy = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !channels_.empty();
      };
      mu_.Await(absl::Condition(&busy));
      continue;
    }
    if (due.empty()) {
      Clock::MonotonicTime next = clock_.MonotonicNow() + options_.reread;
      for (const auto& [id, ch] : channels_) next = std::min(next, ch.next_read);
      next = std::max(next, clock_.MonotonicNow() + kSweepPeriod);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || all_dirty_ || !dirty_.empty();
      };
      clock_.AwaitWithDeadline(mu_, absl::Condition(&woken), next);
      continue;
    }
    mu_.Unlock();
    for (const auto& id : due) Refresh(id);
    mu_.Lock();
  }
  mu_.Unlock();
}

void WatchHub::Refresh(const std::string& collection_id) {
  std::string team;
  std::shared_ptr<const v1::Collection> before;
  {
    absl::MutexLock lock(&mu_);
    auto it = channels_.find(collection_id);
    if (it == channels_.end()) return;
    team = it->second.team;
    before = it->second.latest;
  }
  auto read = Read(team, collection_id);
  std::vector<std::shared_ptr<WatchListener>> listeners;
  auto change = std::make_shared<WatchChange>();
  {
    absl::MutexLock lock(&mu_);
    auto it = channels_.find(collection_id);
    if (it == channels_.end() || it->second.latest != before) return;  // dropped meanwhile
    it->second.next_read = clock_.MonotonicNow() + options_.reread;
    if (!read.ok()) {
      LogWarning("watch", absl::StrCat("read of ", collection_id, ": ", read.status().ToString()));
      return;
    }
    change->collection = std::make_shared<const v1::Collection>(*std::move(read));
    change->changed = ChangedJobs(*before, *change->collection);
    if (change->changed.empty() && !CollectionChanged(*before, *change->collection)) return;
    it->second.latest = change->collection;
    IndexJobs(collection_id, *change->collection);
    for (uint64_t id : it->second.watchers) listeners.push_back(watchers_.at(id).listener);
    if (IsTerminal(change->collection->state())) {
      const std::set<uint64_t> ending = it->second.watchers;
      for (uint64_t id : ending) RemoveWatcher(id);
    }
  }
  for (const auto& l : listeners) l->OnChange(change);
}

}  // namespace npuperf::server
