#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "npuperf/v1/collection.pb.h"

namespace npuperf::server {

// The jobs of finished collections by state, each collection counted once
// (issue 36: Store::CountByState counted every job ever stored on every
// metrics refresh, 116 ms with 1.1 million jobs on SQLite, under its lock).
//
// Why once is enough: a collection is stored in a terminal state only when
// every one of its jobs is terminal (DeriveCollectionState), a terminal job
// never changes state again (results and expiry need a live lease, cancel
// takes queued and live jobs), and no path deletes a job or a collection. So
// CountByState counts the jobs of the collections still queued or running,
// and of those that finished since it last looked; the rest come from here.
//
// A backend keeps one per store; memory is one id per finished collection.
// Thread-safe.
class FinishedJobCounts {
 public:
  // Of `finished` (collections stored in a terminal state), those whose jobs
  // are not counted here yet.
  std::vector<std::string> Uncounted(const std::vector<std::string>& finished) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Adds the jobs of newly counted finished collections: `ids` (each one
  // counted, with jobs or none) and their jobs by state. Ids counted before
  // are skipped with their jobs, so a racing second count adds nothing.
  void Add(const std::vector<std::string>& ids,
           const std::map<std::string, std::map<v1::JobState, int64_t>>& jobs)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Adds every counted collection's jobs into `jobs`.
  void AddTo(std::map<v1::JobState, int64_t>* jobs) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_set<std::string> counted_ ABSL_GUARDED_BY(mu_);
  std::map<v1::JobState, int64_t> jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::server
