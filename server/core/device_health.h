#pragma once
// Device quarantine, applied (docs/operations.md "Device health";
// core/health_rules.h says why): every registration and heartbeat is
// observed, a critical chip is quarantined once (Store::QuarantineDevice), a
// quarantined device takes no job but a canary (compare/canaries.h), and a
// chip's quarantine is released after kHealthyStreakToRelease of healthy
// readings (a canary's, after passing canaries), or by a device admin.
//
// The set of quarantined devices is cached and read again from the store at
// most every kQuarantineCacheTtl (and after this replica's own changes), so a
// quarantine another replica made withholds the device here within that
// time. Thread-safe.
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "npuperf/v1/agent_service.pb.h"
#include "npuperf/v1/device_service.pb.h"
#include "server/core/auth.h"
#include "server/core/health_rules.h"
#include "server/core/metrics.h"
#include "server/store/store.h"

namespace npuperf::server {

// How old the cached set of quarantined devices may be when an offer is
// filtered.
inline constexpr std::chrono::milliseconds kQuarantineCacheTtl{1000};

class DeviceHealth {
 public:
  // admins: the teams that may release devices (--device-admin).
  DeviceHealth(Store& store, Clock& clock, ServerMetrics& metrics, std::set<std::string> admins);

  // What host's agent reports of its devices (RegisterAgent, heartbeats):
  // quarantines each device whose reading is critical, and releases a
  // quarantined one whose chip has read healthy for kHealthyStreakToRelease.
  // A store error is returned (the caller logs it; the report itself stands).
  absl::Status Observe(const std::string& host,
                       const google::protobuf::RepeatedPtrField<v1::DeviceInfo>& devices);
  // Quarantines q.device once (Store::QuarantineDevice), counts and logs a
  // new quarantine, and reads the set again at once, so that this replica
  // places nothing but canaries there from its next offer on. Returns
  // whether the quarantine is new (false: the device already had one).
  // Observe and the canaries (compare/canaries.h) both quarantine so.
  absl::StatusOr<bool> Quarantine(const QuarantineRecord& q);
  // Ends (host, device_id)'s quarantine automatically (by
  // kHealthSystemActor, with note), counts, logs why, and reads the set
  // again. Returns false when it was not quarantined (nothing written).
  absl::StatusOr<bool> ReleaseAutomatically(const std::string& host, int32_t device_id,
                                            const std::string& note, const std::string& why);
  // The offer with each quarantined device marked canary_only: only a canary
  // is placed there (core/assignment.h), never a user's job. On a store
  // error the cache stays as it was (a stale but safe view).
  std::vector<OfferedDevice> Placeable(const std::vector<OfferedDevice>& offered);
  // DeviceService.ListQuarantines for p: the current quarantines (or every
  // one), newest first; limit 0..kMaxQuarantinesPage (0:
  // kDefaultQuarantinesPage), else INVALID_ARGUMENT naming it. Hosts are
  // shown to device admins only (as ListAgents hides them from teams).
  absl::StatusOr<v1::ListQuarantinesResponse> List(const Principal& p, bool auth_required,
                                                   const v1::ListQuarantinesRequest& req);
  // Whether p may release devices and see hosts (CheckDeviceAdmin).
  bool IsDeviceAdmin(const Principal& p, bool auth_required) const;
  // DeviceService.ReleaseDevice for p: CheckDeviceAdmin (PERMISSION_DENIED
  // naming --device-admin), the request (INVALID_ARGUMENT naming host,
  // device_id or note), then Store::ReleaseDevice by p's team
  // (FAILED_PRECONDITION when not quarantined).
  absl::StatusOr<v1::ReleaseDeviceResponse> Release(const Principal& p, bool auth_required,
                                                    const v1::ReleaseDeviceRequest& req);

 private:
  // The cached set, read again when older than kQuarantineCacheTtl or when
  // force is set.
  absl::Status Refresh(bool force) ABSL_LOCKS_EXCLUDED(mu_);
  bool IsQuarantined(const DeviceKey& key) ABSL_LOCKS_EXCLUDED(mu_);
  // Quarantined by npu-smi (source "npu_smi"), which healthy readings end.
  bool QuarantinedByChip(const DeviceKey& key) ABSL_LOCKS_EXCLUDED(mu_);
  // Tracks the healthy streak of a quarantined device; true when it has
  // lasted kHealthyStreakToRelease.
  bool HealthyLongEnough(const DeviceKey& key, bool healthy) ABSL_LOCKS_EXCLUDED(mu_);

  Store& store_;
  Clock& clock_;
  ServerMetrics& metrics_;
  const std::set<std::string> admins_;
  absl::Mutex mu_;
  // The current quarantines and their source.
  std::map<DeviceKey, std::string> quarantined_ ABSL_GUARDED_BY(mu_);
  std::optional<Clock::MonotonicTime> read_at_ ABSL_GUARDED_BY(mu_);
  // When a quarantined device's current healthy streak began.
  std::map<DeviceKey, Clock::MonotonicTime> healthy_since_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::server
