#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuperf/v1/collection.pb.h"
#include "tests/chaos/lease_history.h"
#include "tests/chaos/workload.h"

namespace npuperf::chaos {

// One broken invariant and the facts that show it.
struct Violation {
  std::string invariant;
  std::string facts;
};

// Job outcomes over the whole database.
struct JobFigures {
  int64_t jobs = 0;
  int64_t succeeded = 0;
  int64_t failed = 0;
  int64_t cancelled = 0;
  int64_t retried = 0;   // jobs leased more than once
  int64_t attempts = 0;  // leases granted
  int64_t expired = 0;   // leases the reaper ended
};

struct CheckInput {
  std::string db_url;
  std::vector<std::filesystem::path> conflict_logs;  // msprof-sim's, one per host
  std::vector<std::filesystem::path> spools;         // <work_dir>/spool of every agent
  std::vector<Submitted> submitted;
  // The collection as a replica answers it (GetCollection through the CLI).
  std::function<absl::StatusOr<v1::Collection>(const Submitted&)> get;
};

struct CheckResult {
  std::vector<Violation> violations;
  JobFigures figures;
  LeaseHistory history;
};

// The soak's invariants, read from the database (test-tool SQL), the agents'
// spools and msprof-sim's conflict logs after every collection finished:
//   terminal        every job in exactly one terminal state (and its
//                   collection terminal, its state derived from the jobs)
//   one-round       exactly one round per succeeded job, none for others,
//                   stored under the job's last attempt
//   no-double-book  no msprof-sim conflict; no two leases of one host's
//                   device overlap in time (lease history)
//   no-stale-result every result_updates row was applied under the open
//                   lease of its job, with that lease's attempt and fencing
//                   token (a later lease or an expiry makes a lease stale)
//   spools-empty    no *.result left in any agent's spool
//   counts          each collection's counts (API) equal its jobs in the
//                   database; no collection_queue row is left over
absl::StatusOr<CheckResult> Check(const CheckInput& in);

}  // namespace npuperf::chaos
