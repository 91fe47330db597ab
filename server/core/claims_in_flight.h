#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/store/records.h"

namespace npuperf::server {

// The picks this replica is leasing right now, by collection and by team
// (issue 36). Concurrent claims read the same queue heads before any lock,
// so the chooser sends all of them to the same oldest collection, and all
// but its cap's worth find it capped: a round trip and a locked pick each
// for nothing (in fleet_bench, 1.3 to 2 picks a lease). Counting the picks in
// flight as live jobs of their collection and team, as CountClaimedLease
// counts the leases of one claim, spreads concurrent claims over the
// collections the way they would have been spread one after the other. It
// is a hint, like the heads: the database decides under the collection's
// lock. A pick that leases nothing is counted only while its statement
// runs. Thread-safe.
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
  // Adds the picks in flight to the candidates' live counts.
  void CountInto(std::vector<ClaimCandidate>& candidates) const;

 private:
  void Add(const std::string& collection, const std::string& team, int n);

  mutable absl::Mutex mu_;
  std::map<std::string, int> collections_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> teams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::server
