#include "server/core/job_rules.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "common/status_util.h"

namespace npuperf::server {

JobDecision DecideResult(const AttemptResult& r, const JobFacts& job) {
  JobDecision d;
  const int32_t failed_attempts = job.attempt - job.lost_count;
  if (r.outcome == v1::ATTEMPT_OUTCOME_SUCCEEDED && job.discovery != r.discovery.has_value()) {
    d.next = v1::JOB_STATE_FAILED;  // the agent ran the wrong protocol: a retry cannot help
    d.reason = absl::StrCat("attempt ", job.attempt, " failed: result rejected: ",
                            job.discovery ? "a discovery job must report a candidate table"
                                          : "a candidate table from a job that is not discovery");
  } else if (r.outcome == v1::ATTEMPT_OUTCOME_SUCCEEDED) {
    d.next = v1::JOB_STATE_SUCCEEDED;
  } else if (r.outcome == v1::ATTEMPT_OUTCOME_CANCELLED) {
    d.next = v1::JOB_STATE_CANCELLED;
    d.reason = absl::StrCat("cancelled: ", r.failure_reason);
  } else if (r.outcome == v1::ATTEMPT_OUTCOME_INTERRUPTED && !job.cancelled) {
    d.lost = true;
    const bool requeue = job.lost_count + 1 < r.max_lost;
    d.next = requeue ? v1::JOB_STATE_QUEUED : v1::JOB_STATE_FAILED;
    d.reason = absl::StrCat("attempt ", job.attempt, " interrupted: ", r.failure_reason,
                            requeue ? "; retrying" : "; interrupted too often, giving up");
  } else if (job.cancelled) {
    d.next = v1::JOB_STATE_CANCELLED;
    d.reason = absl::StrCat("cancelled with its collection after attempt ", job.attempt,
                            " failed: ", r.failure_reason);
  } else if (r.retryable && failed_attempts < job.max_attempts) {
    d.next = v1::JOB_STATE_QUEUED;
    d.reason = absl::StrCat("attempt ", job.attempt, " failed, retrying: ", r.failure_reason);
  } else {
    d.next = v1::JOB_STATE_FAILED;
    d.reason = absl::StrCat("attempt ", job.attempt, " failed: ", r.failure_reason);
  }
  return d;
}

std::optional<JobDecision> DecideSuccessOfPlainJob(const AttemptResult& r) {
  if (r.outcome != v1::ATTEMPT_OUTCOME_SUCCEEDED || r.discovery) return std::nullopt;
  JobFacts plain;
  plain.attempt = r.ref.attempt;
  return DecideResult(r, plain);
}

int64_t LeaseRenewalThreshold(int64_t now_ms, int64_t lease_ttl_ms) {
  return now_ms + lease_ttl_ms / 2;
}

bool LeaseRenewalDue(int64_t lease_expires_ms, int64_t now_ms, int64_t lease_ttl_ms) {
  return lease_expires_ms < LeaseRenewalThreshold(now_ms, lease_ttl_ms);
}

JobDecision DecideExpiry(const JobFacts& job, const std::string& agent_id, int32_t max_lost) {
  JobDecision d;
  d.lost = true;
  const bool requeue = !job.cancelled && job.lost_count + 1 < max_lost;
  const std::string lost =
      absl::StrCat("attempt ", job.attempt, " lost: lease expired on agent ", agent_id);
  if (requeue) {
    d.next = v1::JOB_STATE_QUEUED;
    d.reason = absl::StrCat(lost, "; retrying");
  } else if (job.cancelled) {
    d.next = v1::JOB_STATE_CANCELLED;
    d.reason = "cancelled: lease expired after cancellation";
  } else {
    d.next = v1::JOB_STATE_FAILED;
    d.reason =
        absl::StrCat(lost, "; the job lost its agent ", job.lost_count + 1, " times, giving up");
  }
  return d;
}

namespace {

constexpr AgentRefusal kAllRefusals[] = {
    AgentRefusal::kWrongHost,          AgentRefusal::kForeignAgent, AgentRefusal::kUnknownAgent,
    AgentRefusal::kUnregisteredDevice, AgentRefusal::kUnknownJob,   AgentRefusal::kStaleLease,
    AgentRefusal::kBadSecret,          AgentRefusal::kNoClientCert, AgentRefusal::kCertMismatch};

absl::StatusCode CodeOf(AgentRefusal why) {
  switch (why) {
    case AgentRefusal::kUnknownAgent:
    case AgentRefusal::kUnknownJob: return absl::StatusCode::kNotFound;
    case AgentRefusal::kStaleLease: return absl::StatusCode::kFailedPrecondition;
    case AgentRefusal::kUnregisteredDevice: return absl::StatusCode::kInvalidArgument;
    case AgentRefusal::kNoClientCert: return absl::StatusCode::kUnauthenticated;
    case AgentRefusal::kWrongHost:
    case AgentRefusal::kForeignAgent:
    case AgentRefusal::kBadSecret:
    case AgentRefusal::kCertMismatch: break;
  }
  return absl::StatusCode::kPermissionDenied;
}

std::optional<AgentRefusal> CheckHeldLease(const LeaseFacts& job, const AttemptRef& ref,
                                           bool held_by_caller) {
  const bool live = job.state == v1::JOB_STATE_LEASED || job.state == v1::JOB_STATE_RUNNING;
  if (!live || job.fencing_token != ref.fencing_token || job.attempt != ref.attempt) {
    return AgentRefusal::kStaleLease;
  }
  if (!held_by_caller) return AgentRefusal::kForeignAgent;
  if (job.secret_sha256 && Sha256Hex(ref.lease_secret) != *job.secret_sha256) {
    return AgentRefusal::kBadSecret;
  }
  return std::nullopt;
}

}  // namespace

std::optional<AgentRefusal> CheckLease(const LeaseFacts& job, const AttemptRef& ref,
                                       const std::string& agent_id) {
  return CheckHeldLease(job, ref, !agent_id.empty() && job.agent_id == agent_id);
}

std::optional<AgentRefusal> CheckAdoption(const LeaseFacts& job, const AttemptRef& ref,
                                          const std::string& host, int64_t now_ms) {
  if (auto why = CheckHeldLease(job, ref, !host.empty() && job.host == host)) return why;
  if (job.lease_expires_ms < now_ms) return AgentRefusal::kStaleLease;
  return std::nullopt;
}

std::optional<AgentRefusal> CheckArtifactLease(const LeaseFacts& job, const AttemptRef& ref,
                                               const std::string& agent_id) {
  if (job.state != v1::JOB_STATE_SUCCEEDED || job.fencing_token != ref.fencing_token ||
      job.attempt != ref.attempt) {
    return AgentRefusal::kStaleLease;
  }
  if (agent_id.empty() || job.agent_id != agent_id) return AgentRefusal::kForeignAgent;
  if (job.secret_sha256 && Sha256Hex(ref.lease_secret) != *job.secret_sha256) {
    return AgentRefusal::kBadSecret;
  }
  return std::nullopt;
}

const char* AgentRefusalName(AgentRefusal why) {
  switch (why) {
    case AgentRefusal::kWrongHost: return "wrong_host";
    case AgentRefusal::kForeignAgent: return "foreign_agent";
    case AgentRefusal::kUnknownAgent: return "unknown_agent";
    case AgentRefusal::kUnregisteredDevice: return "unregistered_device";
    case AgentRefusal::kUnknownJob: return "unknown_job";
    case AgentRefusal::kStaleLease: return "stale_lease";
    case AgentRefusal::kBadSecret: return "bad_secret";
    case AgentRefusal::kNoClientCert: return "no_client_cert";
    case AgentRefusal::kCertMismatch: return "cert_mismatch";
  }
  return "unknown";
}

std::string AgentRefusalReason(AgentRefusal why) {
  return absl::AsciiStrToUpper(AgentRefusalName(why));
}

absl::Status AgentRefused(AgentRefusal why, const std::string& message) {
  return WithErrorReason(absl::Status(CodeOf(why), message), AgentRefusalReason(why));
}

absl::Status LeaseRefused(AgentRefusal why, const AttemptRef& ref) {
  const std::string lease =
      absl::StrCat("job ", ref.job_id, " attempt ", ref.attempt, " token ", ref.fencing_token);
  switch (why) {
    case AgentRefusal::kUnknownJob:
      return AgentRefused(why, absl::StrCat("job ", ref.job_id, " not found"));
    case AgentRefusal::kStaleLease:
      return AgentRefused(why, absl::StrCat(lease,
                                            " is not the current lease (stale fencing token, or "
                                            "the job finished); nothing stored"));
    case AgentRefusal::kForeignAgent:
      return AgentRefused(why, absl::StrCat(lease, " is held by another agent; nothing stored"));
    case AgentRefusal::kBadSecret:
      return AgentRefused(why,
                          absl::StrCat(lease, ": wrong or missing lease secret; nothing stored"));
    default: break;
  }
  return AgentRefused(why, lease);
}

std::optional<AgentRefusal> AgentRefusalOf(const absl::Status& status) {
  const std::string reason = ErrorReasonOf(status);
  for (AgentRefusal why : kAllRefusals) {
    if (reason == AgentRefusalReason(why)) return why;
  }
  return std::nullopt;
}

void FillAssignmentFromSpec(const v1::CollectionSpec& spec, const std::string& operator_name,
                            v1::JobAssignment* a) {
  for (const auto& op : spec.operators()) {
    if (op.name() != operator_name) continue;
    a->set_bundle_sha256(op.bundle_sha256());
    a->set_runner(op.runner());
    a->set_manifest_path(op.manifest_path());
    auto per_case = op.launch_map().find(a->case_id());
    a->set_launch(per_case != op.launch_map().end() ? per_case->second : op.launch());
  }
  *a->mutable_case_selector() = spec.case_selector();
  *a->mutable_params() = spec.params();
  a->set_kind(spec.kind());
  a->mutable_labels()->insert(spec.labels().begin(), spec.labels().end());
}

std::string BundleOfOperator(const v1::CollectionSpec& spec, const std::string& operator_name) {
  for (const auto& op : spec.operators()) {
    if (op.name() == operator_name) return op.bundle_sha256();
  }
  return "";
}

void AddSpecBundles(const std::string& team, const v1::CollectionSpec& spec,
                    std::set<std::pair<std::string, std::string>>* out) {
  for (const auto& op : spec.operators()) out->emplace(team, op.bundle_sha256());
}

absl::Status CheckArtifactQuota(const NewArtifact& a, const std::string& team,
                                int64_t stored_bytes) {
  const auto own = a.team_quota_bytes.find(team);
  const bool team_flag = own != a.team_quota_bytes.end();
  const int64_t quota = team_flag ? own->second : a.quota_bytes;
  if (quota <= 0 || stored_bytes + a.size_bytes <= quota) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("team ", team, " stores ", stored_bytes, " bytes of artifacts; this one (",
                   a.size_bytes, " bytes) would pass its quota of ", quota, " bytes (",
                   team_flag ? "--artifact-retention-team" : "--artifact-quota-mib", ")"));
}

}  // namespace npuperf::server
