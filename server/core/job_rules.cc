#include "server/core/job_rules.h"

#include "absl/strings/str_cat.h"

namespace npuperf::server {

JobDecision DecideResult(const AttemptResult& r, const JobFacts& job) {
  JobDecision d;
  const int32_t failed_attempts = job.attempt - job.lost_count;
  if (r.outcome == v1::ATTEMPT_OUTCOME_SUCCEEDED) {
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

void FillAssignmentFromSpec(const v1::CollectionSpec& spec, const std::string& operator_name,
                            v1::JobAssignment* a) {
  for (const auto& op : spec.operators()) {
    if (op.name() != operator_name) continue;
    a->set_bundle_sha256(op.bundle_sha256());
    a->set_runner(op.runner());
    a->set_manifest_path(op.manifest_path());
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

}  // namespace npuperf::server
