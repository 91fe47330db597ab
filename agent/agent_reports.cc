// Agent's reporting thread: results spooled on disk are sent until the
// server acknowledges them (or refuses them for good), then the attempts'
// artifacts are uploaded (R12; agent.h has the contract).
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/agent.h"
#include "agent/constants.h"
#include "common/log.h"

namespace npuperf::agent {
namespace {

// Statuses after which resending a result is pointless: the server refused
// it for good (stale lease, unknown job, malformed, not this agent's lease or
// a wrong lease secret).
bool Permanent(const absl::Status& s) {
  return absl::IsFailedPrecondition(s) || absl::IsNotFound(s) || absl::IsInvalidArgument(s) ||
         absl::IsPermissionDenied(s);
}

// Statuses that say nothing about the result but that the server cannot be
// reached (or will not hear this agent): no other result would fare better.
bool Unreachable(const absl::Status& s) { return ServerWentAway(s) || absl::IsUnauthenticated(s); }

}  // namespace

void Agent::ReporterLoop(const std::atomic<bool>& stop) {
  Backoff backoff = RetryBackoff();
  while (!stop) {
    const ReportPass pass = ReportPending(stop, backoff);
    if (!pass.unreachable) artifacts_.UploadReady(SpooledAttempts(), stop);
    metrics_.spool_depth.Set(static_cast<double>(spool_.Depth()));
    // Unreachable: every result waits for the backoff. Else a new result is
    // sent at once and a result the server could not take now at its own
    // retry time.
    auto wake = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stop.load() || (!pass.unreachable && spool_dirty_);
    };
    absl::MutexLock lock(&mu_);
    const Clock::MonotonicTime now = clock_.MonotonicNow();
    Clock::MonotonicTime until = now + (pass.unreachable ? backoff.Next() : kSpoolRescan);
    if (!pass.unreachable && pass.next_retry) until = std::min(until, *pass.next_retry);
    clock_.AwaitWithDeadline(mu_, absl::Condition(&wake), until);
    spool_dirty_ = false;
  }
}

std::set<std::pair<int64_t, int32_t>> Agent::SpooledAttempts() {
  std::set<std::pair<int64_t, int32_t>> out;
  auto pending = spool_.Pending();
  if (pending.ok()) {
    for (const auto& r : *pending) out.insert({r.job_id(), r.attempt()});
  }
  return out;
}

Agent::ReportPass Agent::ReportPending(const std::atomic<bool>& stop, Backoff& backoff) {
  ReportPass pass;
  auto pending = spool_.Pending();
  if (!pending.ok()) return pass;
  std::map<std::string, ResultRetry> still_pending;
  for (const auto& r : *pending) {
    if (stop) break;
    auto retry = retries_.extract(r.update_uuid());
    const Clock::MonotonicTime now = clock_.MonotonicNow();
    if (!retry.empty() && now < retry.mapped().next) {
      pass.next_retry =
          std::min(pass.next_retry.value_or(retry.mapped().next), retry.mapped().next);
      still_pending.insert(std::move(retry));
      continue;
    }
    const ReportOutcome outcome = ReportOne(r);
    if (outcome == ReportOutcome::kUnreachable) {
      pass.unreachable = true;
      if (!retry.empty()) still_pending.insert(std::move(retry));
      break;
    }
    backoff.Reset();  // the server answered
    if (outcome == ReportOutcome::kRetryLater) {
      ResultRetry next = retry.empty() ? ResultRetry{RetryBackoff(), now} : retry.mapped();
      next.next = now + next.backoff.Next();
      pass.next_retry = std::min(pass.next_retry.value_or(next.next), next.next);
      still_pending.emplace(r.update_uuid(), std::move(next));
    }
  }
  // Results left unvisited keep their retry times; results gone from the
  // spool (a kill directive removed them) drop theirs.
  std::set<std::string> spooled;
  for (const auto& r : *pending) spooled.insert(r.update_uuid());
  still_pending.merge(retries_);
  std::erase_if(still_pending, [&](const auto& e) { return !spooled.contains(e.first); });
  retries_ = std::move(still_pending);
  return pass;
}

Agent::ReportOutcome Agent::ReportOne(const v1::ReportResultRequest& r) {
  const auto started = clock_.MonotonicNow();
  auto ack = channel_.ReportResult(r);
  const double took = SecondsBetween(started, clock_.MonotonicNow());
  metrics_.ObservePhase("report", took);
  if (ack.ok()) {
    LogInfo("agent",
            absl::StrCat("job ", r.job_id(), " attempt ", r.attempt(), " reported in ",
                         absl::StrFormat("%.3f s", took),
                         ack->round_id() > 0 ? absl::StrCat(", round ", ack->round_id()) : "",
                         ack->duplicate() ? " (duplicate)" : ""));
  } else if (Permanent(ack.status())) {
    LogWarning("agent", absl::StrCat("job ", r.job_id(),
                                     " result refused for good: ", ack.status().ToString()));
    metrics_.results_refused.Increment();
  } else if (Unreachable(ack.status())) {
    return ReportOutcome::kUnreachable;
  } else {
    LogWarning("agent", absl::StrCat("job ", r.job_id(), " result not taken now (",
                                     ack.status().ToString(), "); retried later"));
    return ReportOutcome::kRetryLater;
  }
  spool_.Remove(r);
  return ReportOutcome::kDone;
}

}  // namespace npuperf::agent
