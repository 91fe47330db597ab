#include "server/core/assignment.h"

#include <algorithm>

#include "common/device_range.h"

namespace npuperf::server {
namespace {

std::optional<size_t> FirstDevice(const ClaimCandidate& c,
                                  const std::vector<OfferedDevice>& devices,
                                  const std::map<std::string, std::string>& labels) {
  for (size_t i = 0; i < devices.size(); ++i) {
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

std::optional<std::pair<size_t, size_t>> ChooseClaim(
    const std::vector<ClaimCandidate>& candidates, const std::vector<OfferedDevice>& devices,
    const std::map<std::string, std::string>& agent_labels) {
  std::optional<std::pair<size_t, size_t>> best;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ClaimCandidate& c = candidates[i];
    if (c.collection_active >= c.spec->max_concurrent_jobs()) continue;
    auto device = FirstDevice(c, devices, agent_labels);
    if (!device) continue;
    if (!best) {
      best = {i, *device};
      continue;
    }
    const ClaimCandidate& b = candidates[best->first];
    if (c.priority < b.priority) break;  // candidates are in priority order
    if (c.team_active < b.team_active) best = {i, *device};
  }
  return best;
}

}  // namespace npuperf::server
