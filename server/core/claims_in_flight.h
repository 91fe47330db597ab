#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/store/records.h"
#include "server/store/store.h"

namespace npuperf::server {

// The picks this replica is leasing right now, by collection and by team
// (issue 36). Concurrent claims read the same queue heads before any lock,
// so the chooser sends all of them to the same oldest collection, and all
// but its cap's worth find it capped: a round trip and a locked pick each
// for nothing (in fleet_bench, 1.33-1.47 npuperf_claim calls a lease).
// Counting the picks in flight as live jobs of their collection and team, as
// CountClaimedLease counts the leases of one claim, spreads concurrent claims
// over the collections the way they would have been spread one after the
// other. It is a hint, like the heads: the database decides under the
// collection's lock. A counted pick may lease nothing (its collection locked
// or drained, its statement's deadline), so the counts only steer: when they
// would leave the chooser nothing to pick, the claim chooses without them
// (Steer). And a lease is counted twice for a moment by a claim whose heads
// were read after it committed but before its statement returned. Both err
// only for as long as one statement runs. Thread-safe.
class ClaimsInFlight {
 public:
  // Marks one pick in flight until it goes out of scope.
  class Pick {
   public:
    Pick(ClaimsInFlight& owner, std::string collection, std::string team);
    ~Pick();
    Pick(Pick&& other) noexcept;
    Pick(const Pick&) = delete;
    Pick& operator=(const Pick&) = delete;
    Pick& operator=(Pick&&) = delete;

   private:
    ClaimsInFlight* owner_;  // nullptr once moved from
    std::string collection_;
    std::string team_;
  };

  // A pick of candidate c's collection, in flight until the result goes.
  Pick Start(const ClaimCandidate& c) { return Pick(*this, c.collection_id, c.team); }
  // Adds the picks in flight to the candidates' live counts; false when none
  // of them has any.
  bool CountInto(std::vector<ClaimCandidate>& candidates) const ABSL_LOCKS_EXCLUDED(mu_);
  // The candidates with the picks in flight counted, unless with them
  // `choose` would find nothing for `devices` that it finds without them:
  // then as they are.
  std::vector<ClaimCandidate> Steer(std::vector<ClaimCandidate> candidates,
                                    const std::vector<OfferedDevice>& devices,
                                    const std::map<std::string, std::string>& agent_labels,
                                    const ClaimChooser& choose) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Add(const std::string& collection, const std::string& team, int n) ABSL_LOCKS_EXCLUDED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, int> collections_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> teams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::server
