#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "server/core/metrics.h"
#include "server/store/store.h"

namespace npuperf::server {

// The soc label of a collection's queue series: its one required SoC when a
// registered device has that SoC (so the label set is bounded by the
// fleet), "any" without a SoC constraint, "other" otherwise (several SoCs,
// or one no device has).
std::string QueueSocLabel(const v1::DeviceConstraints& c, const std::set<std::string>& fleet_socs);

// The per-device states of every registered agent's devices; where two
// agents of a host name the same device (a restarted agent and the lost one
// it replaced), a state other than "offline" wins.
void AddDevices(const std::vector<AgentRecord>& agents, FleetSnapshot* out);

// Refreshes the gauges that come from the store (ServerMetrics: jobs,
// agents, devices, device_state, queue_depth, queue_oldest_age_seconds,
// jobs_unplaceable, regressions, regression_precision). Called by the reaper every --state-metrics
// interval (they may lag the store by that much; their help text says so). Thread-safe.
class StateGauges {
 public:
  StateGauges(Store& store, Clock& clock, ServerMetrics& metrics)
      : store_(store), clock_(clock), metrics_(metrics) {}

  absl::Status Refresh();

 private:
  // What the gauges need of a collection, cached (immutable after
  // submission).
  struct CollectionInfo {
    std::string team;
    int32_t priority = 0;
    v1::DeviceConstraints constraints;
  };
  absl::StatusOr<CollectionInfo> InfoOf(const std::string& collection_id);

  Store& store_;
  Clock& clock_;
  ServerMetrics& metrics_;
  absl::Mutex mu_;
  // Cleared when it passes kMaxCachedCollections.
  static constexpr size_t kMaxCachedCollections = 10'000;
  std::map<std::string, CollectionInfo> info_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::server
