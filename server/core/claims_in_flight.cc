#include "server/core/claims_in_flight.h"

#include <utility>

namespace npuperf::server {

ClaimsInFlight::Pick::Pick(ClaimsInFlight& owner, std::string collection, std::string team)
    : owner_(&owner), collection_(std::move(collection)), team_(std::move(team)) {
  owner_->Add(collection_, team_, 1);
}

ClaimsInFlight::Pick::Pick(Pick&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      collection_(std::move(other.collection_)),
      team_(std::move(other.team_)) {}

ClaimsInFlight::Pick::~Pick() {
  if (owner_ != nullptr) owner_->Add(collection_, team_, -1);
}

void ClaimsInFlight::Add(const std::string& collection, const std::string& team, int n) {
  absl::MutexLock lock(&mu_);
  // Entries at zero are erased: the maps hold only what is in flight.
  if ((collections_[collection] += n) == 0) collections_.erase(collection);
  if ((teams_[team] += n) == 0) teams_.erase(team);
}

bool ClaimsInFlight::CountInto(std::vector<ClaimCandidate>& candidates) const {
  absl::MutexLock lock(&mu_);
  bool counted = false;
  if (collections_.empty()) return counted;
  for (ClaimCandidate& c : candidates) {
    if (auto it = collections_.find(c.collection_id); it != collections_.end()) {
      c.collection_active += it->second;
      counted = true;
    }
    if (auto it = teams_.find(c.team); it != teams_.end()) {
      c.team_active += it->second;
      counted = true;
    }
  }
  return counted;
}

std::vector<ClaimCandidate> ClaimsInFlight::Steer(
    std::vector<ClaimCandidate> candidates, const std::vector<OfferedDevice>& devices,
    const std::map<std::string, std::string>& agent_labels, const ClaimChooser& choose) const {
  std::vector<ClaimCandidate> counted = candidates;
  if (!CountInto(counted)) return candidates;
  if (choose(counted, devices, agent_labels) || !choose(candidates, devices, agent_labels)) {
    return counted;
  }
  return candidates;
}

}  // namespace npuperf::server
