// Scheduler's lease paths: LeaseJob's offer checked and turned into a claim,
// and its long poll, one look at a time (LookForWork). scheduler.h has the
// contracts.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/secure_random.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "server/core/agent_rules.h"
#include "server/core/assignment.h"
#include "server/core/constants.h"
#include "server/core/job_rules.h"
#include "server/core/limits.h"
#include "server/core/scheduler.h"
#include "server/store/db_deadline.h"

namespace npuperf::server {

absl::StatusOr<ClaimRequest> Scheduler::ClaimRequestFor(const AgentIdentity& who,
                                                        const v1::LeaseJobRequest& req) {
  auto agent = agents_.Authorize(who, req.agent_id(), "LeaseJob");
  if (!agent.ok()) return agent.status();
  const std::vector<FieldViolation> bad = ValidateOffer(req, *agent);
  if (!bad.empty()) {
    return agents_.Count("LeaseJob",
                         WithErrorReason(InvalidArgumentWithFields(bad),
                                         AgentRefusalReason(AgentRefusal::kUnregisteredDevice)));
  }
  ClaimRequest claim;
  claim.agent_id = req.agent_id();
  claim.host = agent->host();
  claim.agent_labels = {agent->labels().begin(), agent->labels().end()};
  // Marked canary_only where quarantined by LookForWork, on every look.
  for (const auto& d : req.free_devices())
    claim.devices.push_back({d.device_id(), d.soc(), agent->host()});
  claim.lease_ttl_ms = options_.lease_ttl.count();
  const size_t leases = std::max<size_t>(
      1, std::min<size_t>(std::max(req.max_assignments(), 1), claim.devices.size()));
  for (size_t k = 0; k < leases; ++k) {
    auto secret = SecureRandomHex(kLeaseSecretBytes);
    if (!secret.ok()) return secret.status();
    if (k == 0) {
      claim.lease_secret = *std::move(secret);
    } else {
      claim.more_lease_secrets.push_back(*std::move(secret));
    }
  }
  return claim;
}

absl::StatusOr<std::vector<v1::JobAssignment>> Scheduler::LookForWork(ClaimRequest& claim,
                                                                      int64_t call_ms) {
  using Leases = std::vector<v1::JobAssignment>;
  claim.now_ms = NowMs();
  // On every look: a device quarantined while a poll waited takes only
  // canaries from then on (the quarantines are cached).
  claim.devices = health_.Placeable(claim.devices);
  // Nothing placeable (every offered device quarantined): as for no job.
  if (claim.devices.empty()) return Leases();
  // Each look stops at the call's deadline or kAgentStoreDeadline on.
  DbDeadlineScope look(DbDeadlineScope::Within(clock_.SystemNow(), kAgentStoreDeadline));
  absl::StatusOr<Leases> got = store_.ClaimJobs(claim, ChooseClaim);
  if (absl::IsAborted(got.status())) return Leases();
  if (!got.ok()) return got.status();
  for (const v1::JobAssignment& a : *got) {
    metrics_.jobs_leased.Increment();
    ObserveLease(a, call_ms);
    JobChanged(StoreChange::kUpdated, a.job_id());  // watchers see the lease
  }
  return got;
}

absl::StatusOr<std::vector<v1::JobAssignment>> Scheduler::LeaseJobs(
    const AgentIdentity& who, const v1::LeaseJobRequest& req, const std::function<bool()>& stop) {
  using Leases = std::vector<v1::JobAssignment>;
  if (req.wait_ms() < 0 || req.wait_ms() > kMaxLeaseWait.count()) {
    return InvalidArgumentWithFields(
        {{"wait_ms", absl::StrCat("must be in 0..", kMaxLeaseWait.count())}});
  }
  if (req.max_assignments() < 0 || req.max_assignments() > kMaxAgentDevices) {
    return InvalidArgumentWithFields(
        {{"max_assignments", absl::StrCat("must be in 0..", kMaxAgentDevices)}});
  }
  auto claim = ClaimRequestFor(who, req);
  if (!claim.ok()) return claim.status();
  const Clock::MonotonicTime deadline =
      clock_.MonotonicNow() + std::chrono::milliseconds(req.wait_ms());
  const int64_t call_ms = NowMs();
  while (true) {
    const uint64_t seen = changes_.version();
    absl::StatusOr<Leases> got = LookForWork(*claim, call_ms);
    if (!got.ok()) return got.status();
    if (!got->empty()) return got;
    const Clock::MonotonicTime now = clock_.MonotonicNow();
    if (now >= deadline || stop()) return Leases();
    changes_.WaitNewer(seen, absl::FromChrono(deadline - now), stop);
  }
}

absl::StatusOr<std::optional<v1::JobAssignment>> Scheduler::LeaseJob(
    const AgentIdentity& who, const v1::LeaseJobRequest& req, const std::function<bool()>& stop) {
  v1::LeaseJobRequest one = req;
  one.clear_max_assignments();
  auto got = LeaseJobs(who, one, stop);
  if (!got.ok()) return got.status();
  if (got->empty()) return std::optional<v1::JobAssignment>();
  return std::optional<v1::JobAssignment>(std::move(got->front()));
}

void Scheduler::ObserveLease(const v1::JobAssignment& a, int64_t call_ms) {
  const int64_t now = NowMs();
  const int64_t queued = google::protobuf::util::TimeUtil::TimestampToMilliseconds(a.queued_at());
  if (a.attempt() == 1) metrics_.queue_wait.Observe(std::max<int64_t>(0, now - queued) / 1e3);
  metrics_.submit_to_lease.Observe(std::max<int64_t>(0, now - std::max(queued, call_ms)) / 1e3);
}

}  // namespace npuperf::server
