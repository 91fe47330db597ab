#pragma once

#include <chrono>

// Timeouts and limits of npuperf-agent, in one place (mesos slave/constants.hpp).
namespace npuperf::agent {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

// SIGTERM -> SIGKILL grace for a runner's process group.
inline constexpr milliseconds kKillGrace = seconds(5);
// How long a keeper may take to kill every descendant once told to (after kKillGrace).
inline constexpr milliseconds kKeeperKillWait = seconds(10);
// How long the end of a job waits for its cgroup or run uid to be empty per try,
// and the pause between tries; the device stays held until it is.
inline constexpr milliseconds kReclaimTry = seconds(5);
inline constexpr milliseconds kReclaimRetry = seconds(1);
// Per-job limits when the flags do not say (--job-pids-max; --job-memory-max: none).
inline constexpr int kDefaultJobPids = 4096;
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
// An idle device's npu-smi reading is at most this old when it is offered
// (a job reads it again right before and after its profiled runs).
inline constexpr milliseconds kChipProbeInterval = milliseconds(30'000);
// A session that lasted longer than this resets the reconnect backoff.
inline constexpr milliseconds kStableSession = seconds(10);
// Longest pause of the session thread while a registration is pending.
inline constexpr milliseconds kRegisterPoll = milliseconds(100);
// Rescan period of the result spool when nothing wakes the reporter earlier.
inline constexpr milliseconds kSpoolRescan = seconds(1);
// An attempt's progress reports go at most this often; between two sends the
// newest one waits and replaces those before it (ProgressSender).
inline constexpr milliseconds kProgressInterval = seconds(1);
// Tail of stdout/stderr kept in collection.log and failure reasons.
inline constexpr size_t kLogTailBytes = 2'000;
// The largest case manifest (PERFORMANCE_CASES.json) the agent reads from a
// bundle.
inline constexpr size_t kMaxManifestBytes = 16 << 20;
// Size bound of the verified bundle cache; least recently used tars go first.
inline constexpr int64_t kBundleCacheBytes = int64_t{2} << 30;
// Largest operator bundle accepted from the server.
inline constexpr int64_t kMaxBundleBytes = int64_t{256} << 20;
// Raw output uploads (keep_raw_output): the bytes per message, and the
// deadline of one whole upload.
inline constexpr size_t kArtifactChunkBytes = 1 << 20;
inline constexpr milliseconds kArtifactUploadDeadline = minutes(30);

}  // namespace npuperf::agent
