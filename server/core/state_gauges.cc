#include "server/core/state_gauges.h"

#include <algorithm>

#include "server/core/assignment.h"
#include "server/core/constants.h"
#include "server/core/health_rules.h"
#include "server/core/limits.h"

namespace npuperf::server {

std::string QueueSocLabel(const v1::DeviceConstraints& c, const std::set<std::string>& fleet_socs) {
  if (c.socs_size() == 0) return "any";
  if (c.socs_size() == 1 && fleet_socs.count(c.socs(0)) > 0) return c.socs(0);
  return "other";
}

void AddDevices(const std::vector<AgentRecord>& agents, FleetSnapshot* out) {
  for (const AgentRecord& a : agents) {
    for (const v1::DeviceStatus& d : a.status.devices()) {
      // A host's replaced agent (lost) shows its devices offline; the
      // online agent's state of the same device wins.
      auto [it, fresh] =
          out->devices.emplace(std::make_tuple(a.status.host(), d.device_id(), d.soc()), d.state());
      if (!fresh && it->second == "offline") it->second = d.state();
    }
  }
}

absl::StatusOr<StateGauges::CollectionInfo> StateGauges::InfoOf(const std::string& collection_id) {
  {
    absl::MutexLock lock(&mu_);
    auto it = info_.find(collection_id);
    if (it != info_.end()) return it->second;
  }
  auto c = store_.GetCollectionPage("", collection_id, 0, 0);
  if (!c.ok()) return c.status();
  absl::MutexLock lock(&mu_);
  if (info_.size() >= kMaxCachedCollections) info_.clear();
  return info_[collection_id] =
             CollectionInfo{c->team(), c->spec().priority(), c->spec().constraints()};
}

absl::Status StateGauges::Refresh() {
  auto counts = store_.CountByState();
  if (!counts.ok()) return counts.status();
  auto queued = store_.CountQueuedByCollection(kMaxUnplaceableScan);
  if (!queued.ok()) return queued.status();
  auto agents = store_.ListAgents();
  if (!agents.ok()) return agents.status();
  auto quarantined = store_.ListQuarantines(/*include_released=*/false, kMaxQuarantinesPage);
  if (!quarantined.ok()) return quarantined.status();
  OverlayQuarantines(*quarantined, &*agents);  // npuperf_server_device_state{state="quarantined"}
  FleetSnapshot fleet;
  AddDevices(*agents, &fleet);
  std::set<std::string> socs;
  for (const auto& [key, state] : fleet.devices) socs.insert(std::get<2>(key));
  std::map<std::string, int64_t> unplaceable;
  int64_t oldest_ms = 0;
  for (const QueuedCount& q : *queued) {
    auto info = InfoOf(q.collection_id);
    if (absl::IsNotFound(info.status())) continue;
    if (!info.ok()) return info.status();
    fleet.queue[{info->team, QueueSocLabel(info->constraints, socs), info->priority}] += q.queued;
    if (oldest_ms == 0 || q.oldest_queued_ms < oldest_ms) oldest_ms = q.oldest_queued_ms;
    const Unplaceable why = WhyUnplaceable(info->constraints, *agents);
    if (!why.kind.empty()) unplaceable[why.kind] += q.queued;
  }
  if (oldest_ms > 0) {
    const int64_t now_ms = ToUnixMillis(clock_.SystemNow());
    fleet.oldest_queued_age_seconds = std::max<int64_t>(0, now_ms - oldest_ms) / 1e3;
  }
  metrics_.SetStates(*counts);
  metrics_.SetUnplaceable(unplaceable);
  metrics_.SetFleet(fleet);
  auto regressions = store_.CountRegressions("");
  if (!regressions.ok()) return regressions.status();
  metrics_.SetRegressions(*regressions);
  return absl::OkStatus();
}

}  // namespace npuperf::server
