#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "npuperf/v1/agent_service.pb.h"
#include "npuperf/v1/collection.pb.h"
#include "server/store/store.h"

namespace npuperf::server {

// The job life-cycle decisions every Store backend applies, as pure
// functions (no SQL): both SqliteStore and PostgresStore call them, so the
// two backends cannot drift apart.

// The job row a result or an expiry is decided on.
struct JobFacts {
  int32_t attempt = 0;
  int32_t max_attempts = 0;
  int32_t lost_count = 0;  // attempts whose agent vanished or was interrupted
  bool cancelled = false;  // the collection has a cancel request
};

// What to do with the job.
struct JobDecision {
  v1::JobState next = v1::JOB_STATE_FAILED;
  std::string reason;
  bool lost = false;  // counts against max_lost, not the retry budget
};

// For a finished attempt: SUCCEEDED; CANCELLED (agent stopped it, or it
// failed after its collection was cancelled); INTERRUPTED -> requeue unless
// the job was interrupted/lost max_lost times (does not use the retry
// budget); retryable failure -> QUEUED while attempt - lost_count <
// max_attempts; else FAILED.
JobDecision DecideResult(const AttemptResult& r, const JobFacts& job);

// For a lease that expired on agent_id: requeue while lost_count + 1 <
// max_lost and the collection is not cancelled; else CANCELLED or FAILED.
JobDecision DecideExpiry(const JobFacts& job, const std::string& agent_id, int32_t max_lost);

}  // namespace npuperf::server

namespace npuperf::server {

// Fills what the agent needs to run the job from its collection's spec
// (bundle, runner, manifest, case selector, params, kind, labels).
void FillAssignmentFromSpec(const v1::CollectionSpec& spec, const std::string& operator_name,
                            v1::JobAssignment* a);

// The bundle sha256 of the spec's operator `operator_name`; empty when the
// spec has no such operator.
std::string BundleOfOperator(const v1::CollectionSpec& spec, const std::string& operator_name);

// Adds (team, sha256) for every bundle the spec's operators reference: the
// bundles the collector must keep for the team (CollectBundles).
void AddSpecBundles(const std::string& team, const v1::CollectionSpec& spec,
                    std::set<std::pair<std::string, std::string>>* out);

}  // namespace npuperf::server
