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

void ClaimsInFlight::CountInto(std::vector<ClaimCandidate>& candidates) const {
  absl::MutexLock lock(&mu_);
  if (collections_.empty()) return;
  for (ClaimCandidate& c : candidates) {
    if (auto it = collections_.find(c.collection_id); it != collections_.end()) {
      c.collection_active += it->second;
    }
    if (auto it = teams_.find(c.team); it != teams_.end()) c.team_active += it->second;
  }
}

}  // namespace npuperf::server
