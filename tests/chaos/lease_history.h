#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::chaos {

// One lease of one job attempt, rebuilt from the server's events table: it
// starts at the claim's `job_leased` event (which names attempt, fencing
// token, host and device) and ends at the job's next event, a `job_result`
// (a result applied under this lease, matched with its result_updates row) or
// a `lease_expired` (the reaper requeued or failed it); a lease of a job whose
// collection was cancelled without a result ends when the job finished.
// Reading the history is test-tool SQL (tests/chaos is not the product).
struct Lease {
  int64_t job_id = 0;
  std::string collection_id;
  int attempt = 0;
  int64_t token = 0;
  std::string host;
  int device = -1;
  int64_t start_ms = 0;
  int64_t end_ms = 0;    // 0: still open
  std::string end_kind;  // "job_result", "lease_expired", "finished", ""
  // The events' ids (a sequence, so in the order the store wrote them):
  // end_event is 0 when no event ended the lease ("finished", still open).
  int64_t start_event = 0;
  int64_t end_event = 0;
};

// A problem found while walking a job's events: a result with no open lease,
// or under another attempt's or token's lease (stale), an event detail that
// does not parse.
struct HistoryProblem {
  int64_t job_id = 0;
  std::string what;
};

struct LeaseHistory {
  std::vector<Lease> leases;  // by job, then attempt
  std::vector<HistoryProblem> problems;
  int64_t expired = 0;  // lease_expired events
};

// Reads events and result_updates of the database at url.
absl::StatusOr<LeaseHistory> ReadLeaseHistory(const std::string& url);

// Pairs of leases of one physical device (host, device) whose intervals
// overlap (an open lease counts until `now_ms`), unless the later one's
// job_leased event was written after the earlier one's ending event. The
// times are the `now` each RPC read when it began, so a claim that began
// before a result and leased the device that result freed is stamped a
// little before the result's end, although it saw the result committed;
// the event ids put the two in the order the store wrote them (a claim
// that saw a lease end cannot have written its event before that end's).
std::vector<std::pair<Lease, Lease>> OverlappingLeases(const std::vector<Lease>& leases,
                                                       int64_t now_ms);

}  // namespace npuperf::chaos
