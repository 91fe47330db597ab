#pragma once

#include <chrono>

// Timeouts and limits of npuperf-agent, in one place (mesos slave/constants.hpp).
namespace npuperf::agent {

using std::chrono::milliseconds;
using std::chrono::seconds;

// SIGTERM -> SIGKILL grace for a runner's process group.
inline constexpr milliseconds kKillGrace = seconds(5);
// How often a running child's job checks for cancellation.
inline constexpr milliseconds kCancelPoll = milliseconds(100);
// Long-poll wait of one LeaseJob call.
inline constexpr int kLeaseWaitMs = 5'000;
// Deadline of unary calls to the server (LeaseJob adds its wait).
inline constexpr milliseconds kRpcDeadline = seconds(15);
// Reconnect / resend backoff bounds.
inline constexpr milliseconds kRetryMin = milliseconds(200);
inline constexpr milliseconds kRetryMax = seconds(30);
// Pause before re-offering devices when none could be locked.
inline constexpr milliseconds kIdleProbe = milliseconds(500);
// A session that lasted longer than this resets the reconnect backoff.
inline constexpr milliseconds kStableSession = seconds(10);
// Longest pause of the session thread while a registration is pending.
inline constexpr milliseconds kRegisterPoll = milliseconds(100);
// Rescan period of the result spool when nothing wakes the reporter earlier.
inline constexpr milliseconds kSpoolRescan = seconds(1);
// Tail of stdout/stderr kept in collection.log and failure reasons.
inline constexpr size_t kLogTailBytes = 2'000;
// The largest case manifest (PERFORMANCE_CASES.json) the agent reads from a
// bundle.
inline constexpr size_t kMaxManifestBytes = 16 << 20;
// Size bound of the verified bundle cache; least recently used tars go first.
inline constexpr int64_t kBundleCacheBytes = int64_t{2} << 30;
// Largest operator bundle accepted from the server.
inline constexpr int64_t kMaxBundleBytes = int64_t{256} << 20;

}  // namespace npuperf::agent
