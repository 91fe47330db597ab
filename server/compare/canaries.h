// Canaries (issue 33; docs/operations.md "Device health", "Canaries"): the
// built-in reference job (compare/canary_operator.h) run on idle devices on a
// schedule, each result judged against the same SoC's other devices and the
// device's own history (core/canary_rules.h has the rule and why); a device
// whose canaries run slow is quarantined, with the rounds it produced since
// its last passing canary marked suspect (compare/device_suspects.h), and a
// canary-quarantined device is released after passing ones.
//
// How it runs:
// - A canary is a CanaryRecord (at most one per device and interval slot, so
//   replicas scheduling the same device at once insert it once) and a
//   one-job quick collection of the server's own team kCanaryTeam, pinned to
//   its device (constraints host + device_range), at the lowest priority,
//   with server label npuperf.canary=<id>. The scheduler places it only when
//   no user job can take the device (core/assignment.h), and on a
//   quarantined device it is the only job placed (so that the device can
//   earn its release).
// - Tick runs on every replica's reaper upkeep: it judges the canaries that
//   finished, gives up on one not run within max(interval,
//   kCanaryMaxPending) (the device stayed busy or went away: inconclusive),
//   and queues one on every idle device whose last canary is from an earlier
//   slot.
// - Every result is written with a compare-and-set (Store::UpdateCanary);
//   only the replica whose write landed decides, from the device's stored
//   verdicts (ActionFromHistory), and a quarantine is inserted once
//   (DeviceHealth::Quarantine), which this replica's offers see at once. A
//   restarted server decides the same way.
//
// Thread-safe (Tick and List may run at once; state is in the store).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "npuperf/v1/collection_service.pb.h"
#include "npuperf/v1/device_service.pb.h"
#include "server/core/canary_rules.h"
#include "server/core/device_health.h"
#include "server/core/metrics.h"
#include "server/core/scheduler.h"
#include "server/store/store.h"

namespace npuperf::server {

// A canary not run within max(interval, this) is given up (inconclusive).
inline constexpr std::chrono::minutes kCanaryMaxPending{10};
// Quick-mode repeats of a canary: its kernel time is their median.
inline constexpr int kCanaryRepeats = 5;
// Peers' canaries older than this many intervals are not compared with (a
// device that left the fleet, or stopped running canaries).
inline constexpr int kCanaryPeerIntervals = 7;
// How often idle devices are looked for (at most; half the interval when
// that is shorter): a reaper round is a second, and the agents' listing and
// the newest canaries are two reads.
inline constexpr std::chrono::seconds kCanaryScheduleEvery{10};
// Canaries looked at per Tick: pending ones judged, latest ones read.
inline constexpr int32_t kCanaryPage = 1000;

struct CanaryOptions {
  // How often each idle device runs a canary; zero: never (the default; the
  // demo turns it on, real fleets with --canary-interval).
  std::chrono::milliseconds interval{0};
  // The canary kernel's name (--canary-op-name).
  std::string op_name;
};

// The wire form of a stored canary.
v1::Canary CanaryToProto(const CanaryRecord& c);

class Canaries {
 public:
  // Scheduler::SubmitForServer and Scheduler::Cancel.
  using Submit = ServerSubmit;
  using Cancel = ServerCancel;

  // health applies quarantines and releases (the scheduler's, so that its
  // offers see them at once).
  Canaries(Store& store, Clock& clock, ServerMetrics& metrics, DeviceHealth& health, Submit submit,
           Cancel cancel, CanaryOptions options);

  bool enabled() const { return options_.interval.count() > 0; }

  // One round of upkeep (a no-op when disabled); the first store error.
  absl::Status Tick();

  // DeviceService.ListCanaries: limit 0..1000 and the page token checked
  // (INVALID_ARGUMENT naming them); the host filter and hosts are for
  // device admins only (admin false: PERMISSION_DENIED for a host filter,
  // hosts cleared).
  absl::StatusOr<v1::ListCanariesResponse> List(bool admin, const v1::ListCanariesRequest& req);

 private:
  // Moves a pending canary on: submits it (again: the key is idempotent)
  // when it has no collection yet, judges it when its collection ended,
  // gives it up when it waited too long.
  absl::Status Advance(CanaryRecord c);
  absl::Status Queue(const std::string& host, int32_t device_id, const std::string& soc,
                     int64_t slot);
  absl::Status SubmitCollection(CanaryRecord& c);
  // The newest measured kernel time of each other device of c's SoC, from
  // the last kCanaryPeerIntervals intervals.
  absl::StatusOr<std::vector<double>> PeerTimes(const CanaryRecord& c);
  // Whether another device of c's SoC measured a canary lately: a canary
  // that fails everywhere is a configuration fault (inconclusive), not a
  // sick chip.
  absl::StatusOr<bool> RunsElsewhere(const CanaryRecord& c);
  // The newest kDecisionWindow finished canaries of c's device.
  absl::StatusOr<std::vector<CanaryRecord>> FinishedOf(const CanaryRecord& c);
  // When c's device's last canary quarantine was released (0: never). The
  // streak a decision replays starts there: a device released (by a person
  // who reseated it, or by passing canaries) is judged afresh by the
  // canaries queued after, not re-quarantined at once by the slow ones that
  // quarantined it.
  absl::StatusOr<int64_t> LastReleaseMs(const CanaryRecord& c);
  // Judges c's round (kernel_us set) against the SoC's peers and the
  // device's history.
  absl::Status Judge(CanaryRecord& c, bool clock_suspect);
  // Stores c's result; true when this write landed (another replica's
  // result otherwise stands).
  absl::StatusOr<bool> Finish(CanaryRecord& c, const std::string& state, const std::string& reason);
  // Whether quarantining c's device keeps the SoC's canary quarantines
  // within CanaryQuarantineFits (current: the quarantines now); logs why not.
  absl::StatusOr<bool> QuarantineFits(const CanaryRecord& c,
                                      const std::vector<QuarantineRecord>& current);
  // After a result landed: quarantine or release (c's device).
  absl::Status Decide(const CanaryRecord& c);
  // The bundle, stored for kCanaryTeam when the team does not own it yet.
  absl::StatusOr<std::string> BundleSha();
  int64_t NowMs() { return ToUnixMillis(clock_.SystemNow()); }

  Store& store_;
  Clock& clock_;
  ServerMetrics& metrics_;
  DeviceHealth& health_;
  Submit submit_;
  Cancel cancel_;
  const CanaryOptions options_;
  absl::Mutex mu_;
  std::string bundle_ ABSL_GUARDED_BY(mu_);  // packed once
  std::string bundle_sha_ ABSL_GUARDED_BY(mu_);
  // When this replica last looked for idle devices.
  std::optional<Clock::MonotonicTime> scheduled_at_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::server
