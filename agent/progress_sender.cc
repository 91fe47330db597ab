#include "agent/progress_sender.h"

#include <algorithm>
#include <utility>

namespace npuperf::agent {

ProgressSender::ProgressSender(Clock& clock, Send send, std::chrono::milliseconds interval)
    : clock_(clock), send_(std::move(send)), interval_(interval), thread_([this] { Loop(); }) {}

ProgressSender::~ProgressSender() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void ProgressSender::Post(const v1::ReportProgressRequest& req, Answer answer) {
  absl::MutexLock lock(&mu_);
  Entry& e = entries_[{req.job_id(), req.attempt()}];
  e.waiting = req;
  e.answer = std::move(answer);
  posted_ = true;
}

void ProgressSender::SendNow(const v1::ReportProgressRequest& req, const Answer& answer) {
  bool via_heartbeats;
  {
    absl::MutexLock lock(&mu_);
    via_heartbeats = via_heartbeats_;
  }
  if (via_heartbeats) {
    Post(req, answer);  // the next heartbeat takes it
    return;
  }
  Forget(req.job_id(), req.attempt());
  answer(send_(req));
}

void ProgressSender::SetViaHeartbeats(bool on) {
  absl::MutexLock lock(&mu_);
  // The server that answered reads no progress from heartbeats: what they
  // took may be lost, so the thread sends it (unless something newer waits).
  if (via_heartbeats_ && !on) RetakeLocked();
  via_heartbeats_ = on;
  posted_ = true;  // the thread looks again: what waits may be due now
}

std::optional<v1::JobProgress> ProgressSender::Take(int64_t job_id, int32_t attempt) {
  absl::MutexLock lock(&mu_);
  if (!via_heartbeats_) return std::nullopt;
  auto it = entries_.find({job_id, attempt});
  if (it == entries_.end() || !it->second.waiting) return std::nullopt;
  Entry& e = it->second;
  e.taken = *std::move(e.waiting);
  e.waiting.reset();
  return e.taken->progress();
}

void ProgressSender::RetakeAll() {
  absl::MutexLock lock(&mu_);
  RetakeLocked();
}

void ProgressSender::RetakeLocked() {
  for (auto& [key, e] : entries_) {
    if (!e.waiting && e.taken) e.waiting = *std::move(e.taken);
    e.taken.reset();
  }
}

void ProgressSender::Forget(int64_t job_id, int32_t attempt) {
  absl::MutexLock lock(&mu_);
  const Key key{job_id, attempt};
  auto idle = [this, &key]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = entries_.find(key);
    return it == entries_.end() || !it->second.in_flight;
  };
  mu_.Await(absl::Condition(&idle));
  entries_.erase(key);
}

std::optional<ProgressSender::Key> ProgressSender::Due(Clock::MonotonicTime now,
                                                       std::optional<Clock::MonotonicTime>* next) {
  if (via_heartbeats_) return std::nullopt;  // the heartbeats take them
  for (const auto& [key, e] : entries_) {
    if (!e.waiting || e.in_flight) continue;
    const Clock::MonotonicTime at = e.last_sent ? *e.last_sent + interval_ : now;
    if (at <= now) return key;
    *next = *next ? std::min(**next, at) : at;
  }
  return std::nullopt;
}

void ProgressSender::Loop() {
  mu_.Lock();
  while (!stop_) {
    const Clock::MonotonicTime now = clock_.MonotonicNow();
    std::optional<Clock::MonotonicTime> next;
    const std::optional<Key> due = Due(now, &next);
    if (!due) {
      posted_ = false;
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return posted_ || stop_; };
      if (next) {
        clock_.AwaitWithDeadline(mu_, absl::Condition(&woken), *next);
      } else {
        mu_.Await(absl::Condition(&woken));  // nothing waits: no timed wait on the clock
      }
      continue;
    }
    Entry& e = entries_[*due];
    const v1::ReportProgressRequest req = *std::move(e.waiting);
    e.waiting.reset();
    e.in_flight = true;
    e.last_sent = now;
    const Answer answer = e.answer;
    mu_.Unlock();
    // Forget waits while in_flight: the attempt behind `answer` is alive.
    answer(send_(req));
    mu_.Lock();
    entries_[*due].in_flight = false;
  }
  mu_.Unlock();
}

}  // namespace npuperf::agent
