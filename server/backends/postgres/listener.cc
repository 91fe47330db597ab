#include "server/backends/postgres/listener.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace npuperf::server {

// Dispatches the notifications of one channel to the listener.
class PgListener::Receiver final : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection_base& conn, const char* channel, StoreChange change,
           PgListener& listener)
      : pqxx::notification_receiver(conn, channel), change_(change), listener_(listener) {}
  void operator()(const std::string& payload, int /*backend_pid*/) override {
    if (payload != listener_.self_id_) listener_.Fire(change_);
  }

 private:
  const StoreChange change_;
  PgListener& listener_;
};

PgListener::PgListener(std::string url, std::string self_id, Clock& clock)
    : url_(std::move(url)), self_id_(std::move(self_id)), clock_(clock) {
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    wake_[0] = wake_[1] = -1;
    LogError("postgres",
             absl::StrCat("pipe2: ", strerror(errno), "; no wake-ups from other replicas"));
  }
}

PgListener::~PgListener() {
  {
    absl::MutexLock lock(&mu_);
    fn_ = nullptr;
    stopping_ = true;  // ends a Pause
  }
  if (wake_[1] >= 0) {  // ends a poll in ListenOnce
    const char byte = 1;
    (void)!write(wake_[1], &byte, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (int fd : wake_) {
    if (fd >= 0) close(fd);
  }
}

void PgListener::SetCallback(std::function<void(StoreChange)> fn) {
  absl::MutexLock lock(&mu_);
  fn_ = std::move(fn);
  if (fn_ && !started_ && wake_[0] >= 0) {
    started_ = true;
    thread_ = std::thread([this] { Loop(); });
  }
}

void PgListener::Fire(StoreChange change) {
  absl::MutexLock lock(&mu_);
  if (fn_) fn_(change);
}

void PgListener::Loop() {
  int failures = 0;  // since the last connection that worked
  while (true) {
    bool connected = false;
    try {
      if (!ListenOnce(failures > 0, &connected)) return;
    } catch (const std::exception& e) {
      if (connected || failures == 0) {
        LogWarning("postgres", absl::StrCat("LISTEN connection lost: ", e.what()));
      }
    }
    failures = connected ? 1 : failures + 1;
    if (!Pause(std::chrono::milliseconds(std::min(5000, 100 << std::min(failures, 6))))) return;
  }
}

bool PgListener::ListenOnce(bool reconnected, bool* connected) {
  pqxx::connection conn(url_);
  Receiver jobs(conn, kPgJobsChannel, StoreChange::kClaimable, *this);  // LISTEN
  Receiver updates(conn, kPgUpdatesChannel, StoreChange::kUpdated, *this);
  *connected = true;
  if (reconnected) {
    LogInfo("postgres", "LISTEN connection restored");
    Fire(StoreChange::kClaimable);  // anything sent while we were away
  }
  while (true) {
    const int sock = conn.sock();
    if (sock < 0) throw pqxx::broken_connection("LISTEN connection closed");
    pollfd fds[2] = {{sock, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) {
      throw std::runtime_error(absl::StrCat("poll: ", strerror(errno)));
    }
    if (fds[1].revents != 0) return false;       // stop
    if (fds[0].revents != 0) conn.get_notifs();  // throws on a broken connection
    if (!conn.is_open()) throw pqxx::broken_connection("LISTEN connection closed");
  }
}

bool PgListener::Pause(std::chrono::milliseconds d) {
  absl::MutexLock lock(&mu_);
  clock_.AwaitWithDeadline(mu_, absl::Condition(&stopping_), clock_.MonotonicNow() + d);
  return !stopping_;
}

}  // namespace npuperf::server
