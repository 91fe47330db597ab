// SqliteStore: progress and results of attempts (RecordProgress,
// RecordResult).
#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "server/core/job_rules.h"
#include "server/core/job_state.h"
#include "server/store/sqlite/errors.h"
#include "server/store/sqlite/rows.h"
#include "server/store/sqlite/sqlite_store.h"

namespace npuperf::server {
namespace {

// Stores the evidence of a succeeded attempt as a round with its figures;
// returns the round id. REQUIRES: inside the result's transaction.
int64_t InsertRound(SQLite::Database& db, const AttemptResult& r, const std::string& collection_id,
                    int attempt, const std::string& team, const std::string& op,
                    const std::string& case_id) {
  const std::string blob = r.evidence.SerializeAsString();
  SQLite::Statement ins(db,
                        "INSERT INTO rounds (collection_id, job_id, attempt, team, operator_name, "
                        "case_id, kernel_time_us, bound_label, evidence, created_ms) VALUES "
                        "(?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, collection_id);
  ins.bind(2, r.ref.job_id);
  ins.bind(3, attempt);
  ins.bind(4, team);
  ins.bind(5, op);
  ins.bind(6, case_id);
  ins.bind(7, r.evidence.duration().aggregate_us());
  ins.bind(8, r.evidence.bound().label());
  ins.bind(9, blob.data(), static_cast<int>(blob.size()));
  ins.bind(10, r.now_ms);
  ins.exec();
  const int64_t round_id = db.getLastInsertRowid();
  SQLite::Statement metric(db, "INSERT OR REPLACE INTO round_metrics VALUES (?, ?, ?)");
  for (const auto& [name, value] : r.metrics) {
    metric.bind(1, round_id);
    metric.bind(2, name);
    metric.bind(3, value);
    metric.exec();
    metric.reset();
  }
  return round_id;
}

}  // namespace

absl::StatusOr<bool> SqliteStore::RecordProgress(const std::string& /*agent_id*/,
                                                 const AttemptRef& ref,
                                                 const v1::JobProgress& progress, int64_t now_ms,
                                                 int64_t lease_ttl_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  return GuardSqlite("record progress", [&]() -> absl::StatusOr<bool> {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    const std::string blob = progress.SerializeAsString();
    SQLite::Statement q(*db_,
                        "UPDATE jobs SET state = ?, progress = ?, lease_expires_ms = ? WHERE id = ? "
                        "AND fencing_token = ? AND attempt = ? AND state IN (?, ?) "
                        "RETURNING collection_id");
    q.bind(1, kRunning);
    q.bind(2, blob.data(), static_cast<int>(blob.size()));
    q.bind(3, now_ms + lease_ttl_ms);
    q.bind(4, ref.job_id);
    q.bind(5, ref.fencing_token);
    q.bind(6, ref.attempt);
    q.bind(7, kLeased);
    q.bind(8, kRunning);
    if (!q.executeStep()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job ", ref.job_id, " attempt ", ref.attempt, " token ", ref.fencing_token,
          " is not the current lease (stale fencing token, or the job finished)"));
    }
    const std::string collection_id = q.getColumn(0).getString();
    q.reset();
    const bool cancel = CollectionCancelled(collection_id);
    RefreshCollectionState(collection_id, now_ms);
    tx.commit();
    return cancel;
  });
}

absl::StatusOr<ResultAck> SqliteStore::RecordResult(const AttemptResult& r) {
  std::lock_guard<std::mutex> lock(mu_);
  return GuardSqlite("record result", [&]() -> absl::StatusOr<ResultAck> {
    return ApplyResult(r);
  });
}

// REQUIRES: mu_ held.
absl::StatusOr<ResultAck> SqliteStore::ApplyResult(const AttemptResult& r) {
  SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement seen(*db_, "SELECT job_id, round_id FROM result_updates WHERE update_uuid = ?");
  seen.bind(1, r.update_uuid);
  if (seen.executeStep()) {
    if (seen.getColumn(0).getInt64() != r.ref.job_id) {
      return absl::InvalidArgumentError("update_uuid reused for another job");
    }
    ResultAck ack{seen.getColumn(1).isNull() ? 0 : seen.getColumn(1).getInt64(), true, ""};
    return ack;
  }
  SQLite::Statement job(*db_,
                        "SELECT state, fencing_token, attempt, max_attempts, lost_count, "
                        "collection_id, team, operator_name, case_id FROM jobs WHERE id = ?");
  job.bind(1, r.ref.job_id);
  if (!job.executeStep()) return absl::NotFoundError(absl::StrCat("job ", r.ref.job_id, " not found"));
  const int state = job.getColumn(0).getInt();
  if (job.getColumn(1).getInt64() != r.ref.fencing_token || job.getColumn(2).getInt() != r.ref.attempt ||
      (state != kLeased && state != kRunning)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", r.ref.job_id, " attempt ", r.ref.attempt, " token ", r.ref.fencing_token,
        " is not the current lease (stale fencing token, or the job finished); result not stored"));
  }
  JobFacts facts;
  facts.attempt = job.getColumn(2).getInt();
  facts.max_attempts = job.getColumn(3).getInt();
  facts.lost_count = job.getColumn(4).getInt();
  const int attempt = facts.attempt;
  ResultAck ack{0, false, job.getColumn(5).getString()};
  const std::string team = job.getColumn(6).getString();
  const std::string op = job.getColumn(7).getString();
  const std::string case_id = job.getColumn(8).getString();
  job.reset();
  facts.cancelled = CollectionCancelled(ack.collection_id);
  const JobDecision decision = DecideResult(r, facts);
  const int next = decision.next;
  const std::string& reason = decision.reason;
  const bool lost = decision.lost;
  if (next == v1::JOB_STATE_SUCCEEDED) {
    ack.round_id = InsertRound(*db_, r, ack.collection_id, attempt, team, op, case_id);
  }
  SQLite::Statement up(*db_,
                       "UPDATE jobs SET state = ?, reason = ?, round_id = ?, kernel_time_us = ?, "
                       "bound_label = ?, lease_expires_ms = NULL, finished_ms = ?, lost_count = "
                       "lost_count + ? WHERE id = ?");
  up.bind(1, next);
  up.bind(2, reason);
  if (ack.round_id > 0) {
    up.bind(3, ack.round_id);
    up.bind(4, r.evidence.duration().aggregate_us());
    up.bind(5, r.evidence.bound().label());
  } else {
    up.bind(3);
    up.bind(4);
    up.bind(5);
  }
  if (next == kQueued) {
    up.bind(6);
  } else {
    up.bind(6, r.now_ms);
  }
  up.bind(7, lost ? 1 : 0);
  up.bind(8, r.ref.job_id);
  up.exec();
  SQLite::Statement rec(*db_, "INSERT INTO result_updates VALUES (?, ?, ?, ?, ?, ?)");
  rec.bind(1, r.update_uuid);
  rec.bind(2, r.ref.job_id);
  rec.bind(3, attempt);
  rec.bind(4, r.ref.fencing_token);
  if (ack.round_id > 0) {
    rec.bind(5, ack.round_id);
  } else {
    rec.bind(5);
  }
  rec.bind(6, r.now_ms);
  rec.exec();
  AddEvent(r.now_ms, ack.collection_id, r.ref.job_id, "job_result",
           absl::StrCat(JobStateName(static_cast<v1::JobState>(next)), " ", reason));
  RefreshCollectionState(ack.collection_id, r.now_ms);
  tx.commit();
  return ack;
}

}  // namespace npuperf::server
