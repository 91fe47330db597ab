#include "server/ui/login_throttle.h"

namespace npuperf::server::ui {

void LoginThrottle::Expire(Times& t, Clock::MonotonicTime now) {
  while (!t.empty() && now - t.front() >= kWindow) t.pop_front();
}

bool LoginThrottle::Allowed(const std::string& peer) {
  const auto now = clock_.MonotonicNow();
  absl::MutexLock lock(&mu_);
  const auto it = failures_.find(peer);
  if (it == failures_.end()) return true;
  Expire(it->second, now);
  if (it->second.empty()) {
    failures_.erase(it);
    return true;
  }
  return it->second.size() < static_cast<size_t>(kMaxFailures);
}

void LoginThrottle::RecordFailure(const std::string& peer) {
  const auto now = clock_.MonotonicNow();
  absl::MutexLock lock(&mu_);
  if (failures_.find(peer) == failures_.end() && failures_.size() >= kMaxPeers) MakeRoom(now);
  Times& t = failures_[peer];
  Expire(t, now);
  t.push_back(now);
  while (t.size() > static_cast<size_t>(kMaxFailures)) t.pop_front();
}

void LoginThrottle::RecordSuccess(const std::string& peer) {
  absl::MutexLock lock(&mu_);
  failures_.erase(peer);
}

void LoginThrottle::MakeRoom(Clock::MonotonicTime now) {
  for (auto it = failures_.begin(); it != failures_.end();) {
    Expire(it->second, now);
    it = it->second.empty() ? failures_.erase(it) : std::next(it);
  }
  if (failures_.size() < kMaxPeers) return;
  auto stalest = failures_.begin();
  for (auto it = failures_.begin(); it != failures_.end(); ++it) {
    if (it->second.back() < stalest->second.back()) stalest = it;
  }
  failures_.erase(stalest);
}

size_t LoginThrottle::TrackedPeersForTest() {
  absl::MutexLock lock(&mu_);
  return failures_.size();
}

}  // namespace npuperf::server::ui
