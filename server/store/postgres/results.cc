// PostgresStore: progress and results of attempts (RecordProgress,
// RecordResult).
#include "absl/strings/str_cat.h"
#include "server/core/job_rules.h"
#include "server/core/job_state.h"
#include "server/store/postgres/postgres_store.h"
#include "server/store/postgres/rows.h"

namespace npuperf::server {
namespace {

std::string StaleMessage(const AttemptRef& ref, absl::string_view tail) {
  return absl::StrCat("job ", ref.job_id, " attempt ", ref.attempt, " token ", ref.fencing_token,
                      " is not the current lease (stale fencing token, or the job finished)", tail);
}

}  // namespace

absl::StatusOr<bool> PostgresStore::RecordProgress(const std::string& /*agent_id*/,
                                                   const AttemptRef& ref,
                                                   const v1::JobProgress& progress, int64_t now_ms,
                                                   int64_t lease_ttl_ms) {
  return pool_.Run("record progress", [&](pqxx::work& tx) -> absl::StatusOr<bool> {
    const CollectionLock lock = LockJobCollection(tx, ref.job_id);
    const std::optional<bool> cancel = lock.cancelled;
    if (!cancel) return absl::FailedPreconditionError(StaleMessage(ref, ""));
    auto r = tx.exec_prepared("progress_record", PgBytes(progress.SerializeAsString()),
                              now_ms + lease_ttl_ms, ref.job_id, ref.fencing_token, ref.attempt,
                              replica_id_);
    if (r.empty()) return absl::FailedPreconditionError(StaleMessage(ref, ""));
    const std::string collection_id = r[0][0].as<std::string>();
    RefreshCollectionState(tx, collection_id, now_ms, *cancel, lock.state);
    return *cancel;
  });
}

absl::StatusOr<ResultAck> PostgresStore::RecordResult(const AttemptResult& r) {
  return pool_.Run("record result",
                   [&](pqxx::work& tx) { return ApplyResult(tx, r, replica_id_); });
}

absl::StatusOr<ResultAck> PostgresStore::ApplyResult(pqxx::work& tx, const AttemptResult& r,
                                                     const std::string& notify_payload) {
  // Collection, then job: a concurrent resend of the same update (another
  // replica) waits here and then finds the update recorded below.
  const CollectionLock lock = LockJobCollection(tx, r.ref.job_id);
  const bool cancelled = lock.cancelled.value_or(false);
  auto job = tx.exec_prepared("result_job_lock", r.ref.job_id, r.update_uuid);
  auto applied_already = [&](const pqxx::row& seen) -> absl::StatusOr<ResultAck> {
    if (seen[0].as<int64_t>() != r.ref.job_id) {
      return absl::InvalidArgumentError("update_uuid reused for another job");
    }
    return ResultAck{seen[1].as<int64_t>(0), true, ""};
  };
  if (!job.empty() && !job[0][9].is_null()) return applied_already(job[0].slice(9, 11));
  const bool live = !job.empty() && (job[0][0].as<int>() == v1::JOB_STATE_LEASED ||
                                     job[0][0].as<int>() == v1::JOB_STATE_RUNNING);
  if (!live || job[0][1].as<int64_t>() != r.ref.fencing_token ||
      job[0][2].as<int>() != r.ref.attempt) {
    // Not applicable as it stands: look for the update again in a fresh
    // snapshot (the job lock may have waited for its concurrent resend).
    auto seen = tx.exec_prepared("result_seen", r.update_uuid);
    if (!seen.empty()) return applied_already(seen[0]);
    if (job.empty()) return absl::NotFoundError(absl::StrCat("job ", r.ref.job_id, " not found"));
    return absl::FailedPreconditionError(StaleMessage(r.ref, "; result not stored"));
  }
  const pqxx::row row = job[0];
  ResultAck ack{0, false, row[5].as<std::string>()};
  const JobFacts facts{row[2].as<int>(), row[3].as<int>(), row[4].as<int>(), cancelled};
  const JobDecision d = DecideResult(r, facts);
  if (d.next == v1::JOB_STATE_SUCCEEDED) ack.round_id = StoreRound(tx, r, row);
  tx.exec_prepared("job_finish", static_cast<int>(d.next), d.reason, ack.round_id,
                   r.evidence.duration().aggregate_us(), r.evidence.bound().label(),
                   d.next == v1::JOB_STATE_QUEUED ? int64_t{0} : r.now_ms, d.lost ? 1 : 0,
                   r.ref.job_id, r.update_uuid, facts.attempt, r.ref.fencing_token, r.now_ms,
                   ack.collection_id, absl::StrCat(JobStateName(d.next), " ", d.reason),
                   notify_payload);
  RefreshCollectionState(tx, ack.collection_id, r.now_ms, cancelled, lock.state);
  return ack;
}

// Columns of row: state, fencing_token, attempt, max_attempts, lost_count,
// collection_id, team, operator_name, case_id.
int64_t PostgresStore::StoreRound(pqxx::work& tx, const AttemptResult& r, const pqxx::row& row) {
  const int64_t round_id =
      tx.exec_prepared1("round_insert", row[5].as<std::string>(), r.ref.job_id, row[2].as<int>(),
                        row[6].as<std::string>(), row[7].as<std::string>(),
                        row[8].as<std::string>(), r.evidence.duration().aggregate_us(),
                        r.evidence.bound().label(), PgBytes(r.evidence.SerializeAsString()),
                        r.now_ms, PgMetricsJson(r.metrics))[0]
          .as<int64_t>();
  return round_id;
}

PostgresStore::CollectionLock PostgresStore::LockJobCollection(pqxx::work& tx, int64_t job_id) {
  auto c = tx.exec_prepared("job_collection_lock", job_id);
  if (c.empty()) return {};
  return {!c[0][1].as<std::string>().empty(), static_cast<v1::CollectionState>(c[0][2].as<int>())};
}

}  // namespace npuperf::server
