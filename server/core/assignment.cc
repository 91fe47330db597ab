#include "server/core/assignment.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/device_range.h"
#include "server/core/canary_rules.h"

namespace npuperf::server {
namespace {

bool IsCanary(const ClaimCandidate& c) { return c.spec->labels().contains(kCanaryLabel); }

std::optional<size_t> FirstDevice(const ClaimCandidate& c,
                                  const std::vector<OfferedDevice>& devices,
                                  const std::map<std::string, std::string>& labels) {
  const bool canary = IsCanary(c);
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].canary_only && !canary) continue;
    if (DeviceMatches(c.spec->constraints(), devices[i], labels)) return i;
  }
  return std::nullopt;
}

}  // namespace

bool DeviceMatches(const v1::DeviceConstraints& c, const OfferedDevice& d,
                   const std::map<std::string, std::string>& labels) {
  if (!c.socs().empty() && std::find(c.socs().begin(), c.socs().end(), d.soc) == c.socs().end()) {
    return false;
  }
  if (!c.host().empty() && c.host() != d.host) return false;
  for (const auto& [k, v] : c.host_labels()) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  if (!c.device_range().empty()) {
    auto ids = ParseDeviceRange(c.device_range());
    if (!ids.ok() || !std::binary_search(ids->begin(), ids->end(), d.device_id)) return false;
  }
  return true;
}

Unplaceable WhyUnplaceable(const v1::DeviceConstraints& c,
                           const std::vector<v1::AgentStatus>& agents) {
  bool online = false, soc_served = false, labels_served = false, host_served = c.host().empty();
  for (const v1::AgentStatus& a : agents) {
    if (a.state() != "online") continue;
    online = true;
    host_served = host_served || a.host() == c.host();
    const std::map<std::string, std::string> labels(a.labels().begin(), a.labels().end());
    v1::DeviceConstraints soc_and_labels = c;
    soc_and_labels.clear_device_range();
    for (const v1::DeviceStatus& d : a.devices()) {
      const OfferedDevice device{d.device_id(), d.soc(), a.host()};
      if (DeviceMatches(c, device, labels)) return {};
      const bool soc = c.socs().empty() ||
                       std::find(c.socs().begin(), c.socs().end(), d.soc()) != c.socs().end();
      soc_served = soc_served || soc;
      labels_served = labels_served || DeviceMatches(soc_and_labels, device, labels);
    }
  }
  if (!online) return {"no_agent", "no agent is online"};
  if (!host_served) return {"host", absl::StrCat("no online agent runs on host ", c.host())};
  if (!soc_served) {
    return {"soc", absl::StrCat("no online agent serves SoC ", absl::StrJoin(c.socs(), " or "))};
  }
  if (!labels_served) {
    std::vector<std::string> pairs;
    for (const auto& [k, v] : c.host_labels()) pairs.push_back(absl::StrCat(k, "=", v));
    std::sort(pairs.begin(), pairs.end());
    return {"host_labels", absl::StrCat("no online agent with a matching SoC carries host labels ",
                                        absl::StrJoin(pairs, ","))};
  }
  return {"device_range",
          absl::StrCat("no online agent has a matching device in range ", c.device_range())};
}

Unplaceable WhyUnplaceable(const v1::DeviceConstraints& c, const std::vector<AgentRecord>& agents) {
  std::vector<v1::AgentStatus> statuses;
  statuses.reserve(agents.size());
  for (const AgentRecord& a : agents) statuses.push_back(a.status);
  return WhyUnplaceable(c, statuses);
}

absl::Status FillWaitingReason(Store& store, v1::Collection* c) {
  if (c->counts().queued() == 0) return absl::OkStatus();
  auto agents = store.ListAgents();
  if (!agents.ok()) return agents.status();
  c->set_waiting_reason(WhyUnplaceable(c->spec().constraints(), *agents).reason);
  return absl::OkStatus();
}

std::optional<std::pair<size_t, size_t>> ChooseClaim(
    const std::vector<ClaimCandidate>& candidates, const std::vector<OfferedDevice>& devices,
    const std::map<std::string, std::string>& agent_labels) {
  std::optional<std::pair<size_t, size_t>> best;
  // The first canary that could go, taken only when no user job can.
  std::optional<std::pair<size_t, size_t>> canary;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ClaimCandidate& c = candidates[i];
    if (c.collection_active >= c.spec->max_concurrent_jobs()) continue;
    auto device = FirstDevice(c, devices, agent_labels);
    if (!device) continue;
    if (IsCanary(c)) {
      if (!canary) canary = {i, *device};
      continue;
    }
    if (!best) {
      best = {i, *device};
      continue;
    }
    const ClaimCandidate& b = candidates[best->first];
    if (c.priority < b.priority) break;  // candidates are in priority order
    if (c.team_active < b.team_active) best = {i, *device};
  }
  return best ? best : canary;
}

void CountClaimedLease(std::vector<ClaimCandidate>& candidates, size_t pick) {
  const std::string collection = candidates[pick].collection_id;
  const std::string team = candidates[pick].team;
  for (ClaimCandidate& c : candidates) {
    if (c.collection_id == collection) ++c.collection_active;
    if (c.team == team) ++c.team_active;
  }
}

}  // namespace npuperf::server
