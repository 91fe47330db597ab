#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "npuperf/v1/agent_service.pb.h"

namespace npuperf::agent {

// The progress reports of the agent's running attempts, coalesced (issue 36).
//
// Why: a quick job of three repeats reports about eleven phases in a second
// or two, and each report was an RPC on the job's own thread: a round trip
// (on PostgreSQL two statements and the collection's row lock) per phase,
// and the job waited for every one. Progress is for the people watching:
// heartbeats renew the leases, and cancels also come with the heartbeat's
// answer. So:
// - Post keeps only the newest report of an attempt and returns at once. The
//   sender's thread sends it when `interval` has passed since that attempt's
//   last send; an attempt's first report is due at once (it marks the job
//   running), and the thread sends whichever report is newest when it gets
//   to it. A report that waits is sent even if nothing follows it, so a long
//   phase shows within `interval`.
// - SendNow (the report just before the result) drops the attempt's waiting
//   report and sends on the caller's thread, after a send of the attempt in
//   flight: it reaches the server before the result does.
// - Forget drops an attempt's waiting report and waits for a send of it in
//   flight; after it returns, that attempt's answer is never called again.
// Each answer (the lease is gone, the collection was cancelled) goes to the
// attempt's callback, on the thread that sent it.
//
// A server that reads progress from heartbeats (SetViaHeartbeats(true), from
// the registration's answer) needs no call per report: then Post and SendNow
// only keep each attempt's newest report, the agent's heartbeat Takes it, and
// the thread sends nothing. Each heartbeat carries every attempt's news in
// one message and the server stores them in one write (issue 36). The
// heartbeat's answer says what a report's answer would (a KILL directive for a
// lease that is gone, a CancelJob), so no answer callback is called; a
// report still waiting when its attempt ends is dropped by Forget (the result
// says more), and the first report waits for the next heartbeat (one period,
// 1 s by default) instead of going at once.
// Thread-safe. The destructor sends nothing more and joins the thread.
class ProgressSender {
 public:
  using Send =
      std::function<absl::StatusOr<v1::ReportProgressResponse>(const v1::ReportProgressRequest&)>;
  using Answer = std::function<void(const absl::StatusOr<v1::ReportProgressResponse>&)>;

  ProgressSender(Clock& clock, Send send, std::chrono::milliseconds interval);
  ~ProgressSender();
  ProgressSender(const ProgressSender&) = delete;
  ProgressSender& operator=(const ProgressSender&) = delete;

  void Post(const v1::ReportProgressRequest& req, Answer answer);
  void SendNow(const v1::ReportProgressRequest& req, const Answer& answer);
  void Forget(int64_t job_id, int32_t attempt);

  // Whether reports go with the heartbeats (see above): from the
  // registration's answer and every heartbeat's. Switching back sends the
  // reports kept by then through the thread, the last ones the heartbeats
  // took included (a replica that ignores them may have dropped them).
  void SetViaHeartbeats(bool on);
  // Heartbeat mode: the attempt's newest report not yet taken, else nullopt.
  std::optional<v1::JobProgress> Take(int64_t job_id, int32_t attempt);
  // Heartbeat mode: every attempt's last taken report is due again unless a
  // newer one waits (a new session: the old one may have lost its last
  // heartbeats).
  void RetakeAll();

 private:
  using Key = std::pair<int64_t, int32_t>;  // job, attempt
  struct Entry {
    std::optional<v1::ReportProgressRequest> waiting;
    std::optional<v1::ReportProgressRequest> taken;  // heartbeat mode: the last one taken
    Answer answer;
    std::optional<Clock::MonotonicTime> last_sent;
    bool in_flight = false;
  };

  void Loop();
  // Every attempt's last taken report waits again, unless a newer one does.
  void RetakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The entry whose report is due now; else nullopt, and when the next one
  // is due (nullopt: no report waits).
  std::optional<Key> Due(Clock::MonotonicTime now, std::optional<Clock::MonotonicTime>* next)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  const Send send_;
  const std::chrono::milliseconds interval_;
  absl::Mutex mu_;
  std::map<Key, Entry> entries_ ABSL_GUARDED_BY(mu_);
  bool posted_ ABSL_GUARDED_BY(mu_) = false;  // since the thread last looked
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool via_heartbeats_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace npuperf::agent
