#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
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
  // A discovery job (PROFILE_MODE_DISCOVER; the only jobs without an op_name).
  bool discovery = false;
};

// What to do with the job.
struct JobDecision {
  v1::JobState next = v1::JOB_STATE_FAILED;
  std::string reason;
  bool lost = false;  // counts against max_lost, not the retry budget
};

// For a finished attempt: SUCCEEDED (FAILED for good when a discovery job
// reports no candidate table, or another job reports one); CANCELLED (agent stopped it, or it
// failed after its collection was cancelled); INTERRUPTED -> requeue unless
// the job was interrupted/lost max_lost times (does not use the retry
// budget); retryable failure -> QUEUED while attempt - lost_count <
// max_attempts; else FAILED.
JobDecision DecideResult(const AttemptResult& r, const JobFacts& job);

// The decision for a success of a job that is not a discovery job, known
// before the job is read: DecideResult reads none of the job's counts for it
// (and a cancel request does not undo a success), so a store may apply it in
// one call that checks, under the locks, the lease and that the job is not a
// discovery job (issue 36: PostgreSQL's npuperf_result, one round trip
// instead of six). nullopt for any other result: the store reads the job and
// decides with DecideResult.
std::optional<JobDecision> DecideSuccessOfPlainJob(const AttemptResult& r);

// For a lease that expired on agent_id: requeue while lost_count + 1 <
// max_lost and the collection is not cancelled; else CANCELLED or FAILED.
JobDecision DecideExpiry(const JobFacts& job, const std::string& agent_id, int32_t max_lost);

// A job's lease as stored, for CheckLease and CheckAdoption.
struct LeaseFacts {
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  int32_t attempt = 0;
  int64_t fencing_token = 0;
  std::string agent_id;  // the lease's holder
  std::string host;      // the holder's host
  int64_t lease_expires_ms = 0;
  // sha256 hex of the lease's secret; nullopt for a lease granted before
  // migration 0004 (it needs no secret until it ends).
  std::optional<std::string> secret_sha256;
};

// Why agent_id may not report on, or renew, the attempt `ref`, or nullopt
// when it may: kStaleLease unless the job is LEASED or RUNNING with ref's
// attempt and fencing token; kForeignAgent unless agent_id holds the lease;
// kBadSecret unless ref presents the lease's secret. Both backends decide
// every progress report, result and renewal with it.
std::optional<AgentRefusal> CheckLease(const LeaseFacts& job, const AttemptRef& ref,
                                       const std::string& agent_id);
// Whether a heartbeat must write a held lease's new expiry: only once less
// than half the TTL is left (issue 36). Every agent heartbeats each second
// (SchedulerOptions::heartbeat_interval) against a 30 s TTL, so rewriting
// each lease on every heartbeat was 15 writes where one keeps it; at 3,000
// devices the renewals were PostgreSQL's largest cost per job. A held lease
// stays valid for at least ttl/2 after a heartbeat either way.
bool LeaseRenewalDue(int64_t lease_expires_ms, int64_t now_ms, int64_t lease_ttl_ms);
// The expiry below which a lease is due (LeaseRenewalDue), for a statement.
int64_t LeaseRenewalThreshold(int64_t now_ms, int64_t lease_ttl_ms);

// The same for an agent of `host` adopting ref at re-registration: the lease
// must also be unexpired at now_ms, and held by an agent of that host.
std::optional<AgentRefusal> CheckAdoption(const LeaseFacts& job, const AttemptRef& ref,
                                          const std::string& host, int64_t now_ms);

// Why agent_id may not attach an artifact to the round of attempt ref, or
// nullopt when it may: kStaleLease unless the job SUCCEEDED with ref's
// attempt and fencing token (its last lease); kForeignAgent unless agent_id
// held that lease; kBadSecret unless ref presents its secret. Both backends
// decide every artifact upload with it.
std::optional<AgentRefusal> CheckArtifactLease(const LeaseFacts& job, const AttemptRef& ref,
                                               const std::string& agent_id);

// The artifact quota rule both backends apply at CheckArtifact and
// AttachArtifact: the team's quota is its own (a.team_quota_bytes, from
// --artifact-retention-team) or else a.quota_bytes (0: none); the bytes it
// stores plus a.size_bytes must not pass it. RESOURCE_EXHAUSTED naming the
// team, the bytes, the quota and the flag that set it.
absl::Status CheckArtifactQuota(const NewArtifact& a, const std::string& team,
                                int64_t stored_bytes);

// The refusal as a status: NOT_FOUND (unknown agent or job),
// FAILED_PRECONDITION (stale lease), PERMISSION_DENIED (wrong host, foreign
// agent, bad secret, certificate mismatch), UNAUTHENTICATED (no client
// certificate), INVALID_ARGUMENT (unregistered device), with the
// reason as the ErrorInfo reason (AgentRefusalReason).
absl::Status AgentRefused(AgentRefusal why, const std::string& message);
// AgentRefused for the attempt ref, with the message saying what it is.
absl::Status LeaseRefused(AgentRefusal why, const AttemptRef& ref);
// status's AgentRefusal (its ErrorInfo reason), nullopt when it has none.
std::optional<AgentRefusal> AgentRefusalOf(const absl::Status& status);
// The metric label: "wrong_host", "foreign_agent", "unknown_agent",
// "unregistered_device", "unknown_job", "stale_lease", "bad_secret",
// "no_client_cert", "cert_mismatch".
const char* AgentRefusalName(AgentRefusal why);
// The ErrorInfo reason: the label in upper case ("FOREIGN_AGENT").
std::string AgentRefusalReason(AgentRefusal why);

}  // namespace npuperf::server

namespace npuperf::server {

// Fills what the agent needs to run the job from its collection's spec
// (bundle, runner, manifest, launch selector of a->case_id() or of the
// operator, case selector, params, kind, labels). REQUIRES: a->case_id() set.
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
