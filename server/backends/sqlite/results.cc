// SqliteStore: progress and results of attempts (RecordProgress,
// RecordResult).
#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/rows.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/job_rules.h"
#include "server/core/job_state.h"

namespace npuperf::server {
absl::StatusOr<bool> SqliteStore::RecordProgress(const std::string& agent_id, const AttemptRef& ref,
                                                 const v1::JobProgress& progress, int64_t now_ms,
                                                 int64_t lease_ttl_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    absl::StatusOr<bool> cancel = StoreProgress(agent_id, ref, progress, now_ms, lease_ttl_ms);
    if (cancel.ok()) tx.commit();
    return cancel;
  } catch (...) {
    return CurrentSqliteError("record progress");
  }
}

absl::StatusOr<LeaseRenewal> SqliteStore::RecordProgressMany(
    const std::string& agent_id, const std::vector<ProgressReport>& reports, int64_t now_ms,
    int64_t lease_ttl_ms) {
  if (reports.empty()) return LeaseRenewal();
  absl::MutexLock lock(&mu_);
  try {
    // One transaction: one commit (one fsync) for the whole heartbeat.
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    LeaseRenewal out;
    for (const ProgressReport* r : LastReportPerJob(reports)) {
      absl::StatusOr<bool> cancel =
          StoreProgress(agent_id, r->ref, r->progress, now_ms, lease_ttl_ms);
      if (!cancel.ok() && !AgentRefusalOf(cancel.status())) return cancel.status();
      if (!cancel.ok()) continue;  // refused: nothing of it was written
      out.renewed.push_back(r->ref);
      if (*cancel) out.cancelled.push_back(r->ref);
    }
    tx.commit();
    return out;
  } catch (...) {
    return CurrentSqliteError("record progress");
  }
}

absl::StatusOr<bool> SqliteStore::StoreProgress(const std::string& agent_id, const AttemptRef& ref,
                                                const v1::JobProgress& progress, int64_t now_ms,
                                                int64_t lease_ttl_ms) {
  const std::optional<LeaseFacts> lease = LoadLease(ref.job_id);
  if (!lease) return LeaseRefused(AgentRefusal::kUnknownJob, ref);
  if (auto why = CheckLease(*lease, ref, agent_id)) return LeaseRefused(*why, ref);
  const std::string blob = progress.SerializeAsString();
  SQLite::Statement q(*db_,
                      "UPDATE jobs SET state = ?, progress = ?, lease_expires_ms = ? WHERE id = ? "
                      "RETURNING collection_id");
  q.bind(1, kRunning);
  q.bind(2, blob.data(), static_cast<int>(blob.size()));
  q.bind(3, now_ms + lease_ttl_ms);
  q.bind(4, ref.job_id);
  q.executeStep();
  const std::string collection_id = q.getColumn(0).getString();
  q.reset();
  const StoredCollection stored = LoadStoredCollection(collection_id);
  // Recounting a collection reads all its jobs: 15 ms a report in a
  // 100,000-job collection, under the store's lock (issue 36).
  if (ProgressNeedsCollectionRefresh(stored.state)) RefreshCollectionState(collection_id, now_ms);
  return stored.cancelled;
}

absl::StatusOr<ResultAck> SqliteStore::RecordResult(const AttemptResult& r) {
  absl::MutexLock lock(&mu_);
  try {
    return ApplyResult(r);
  } catch (...) {
    return CurrentSqliteError("record result");
  }
}

absl::StatusOr<ResultAck> SqliteStore::ApplyResult(const AttemptResult& r) {
  SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
  auto before = AppliedBefore(r);
  if (!before.ok()) return before.status();
  if (before->has_value()) return **before;
  auto job = LoadReportedJob(r);
  if (!job.ok()) return job.status();
  // Read once: FinishJob below changes the job, not the collection's row.
  const StoredCollection stored = LoadStoredCollection(job->collection_id);
  job->facts.cancelled = stored.cancelled;
  const JobDecision decision = DecideResult(r, job->facts);
  ResultAck ack{0, false, job->collection_id};
  if (decision.next == v1::JOB_STATE_SUCCEEDED && !r.discovery) {
    ack.round_id = InsertRound(r, *job);
  }
  FinishJob(r, decision, job->facts.attempt, ack.round_id);
  AddEvent(r.now_ms, ack.collection_id, r.ref.job_id, EventKind::kJobResult,
           absl::StrCat(JobStateName(decision.next), " ", decision.reason));
  // Recounted only when the result may change the collection's state
  // (ResultKeepsCollectionRunning, as PostgreSQL's RefreshAfterResult),
  // reading the other jobs only when the rule needs them.
  if (!ResultMayKeepCollectionRunning(stored.state, decision.next) ||
      !OthersUnfinished(ack.collection_id, r.ref.job_id)) {
    RefreshCollectionState(ack.collection_id, r.now_ms);
  }
  tx.commit();
  return ack;
}

absl::StatusOr<std::optional<ResultAck>> SqliteStore::AppliedBefore(const AttemptResult& r) {
  SQLite::Statement seen(*db_, "SELECT job_id, round_id FROM result_updates WHERE update_uuid = ?");
  seen.bind(1, r.update_uuid);
  if (!seen.executeStep()) return std::nullopt;
  if (seen.getColumn(0).getInt64() != r.ref.job_id) {
    return absl::InvalidArgumentError("update_uuid reused for another job");
  }
  return ResultAck{seen.getColumn(1).isNull() ? 0 : seen.getColumn(1).getInt64(), true, ""};
}

absl::StatusOr<SqliteStore::ReportedJob> SqliteStore::LoadReportedJob(const AttemptResult& r) {
  const std::optional<LeaseFacts> lease = LoadLease(r.ref.job_id);
  if (!lease) return LeaseRefused(AgentRefusal::kUnknownJob, r.ref);
  if (auto why = CheckLease(*lease, r.ref, r.agent_id)) return LeaseRefused(*why, r.ref);
  SQLite::Statement q(*db_,
                      "SELECT max_attempts, lost_count, collection_id, team, operator_name, "
                      "case_id, op_name FROM jobs WHERE id = ?");
  q.bind(1, r.ref.job_id);
  q.executeStep();
  ReportedJob job;
  job.facts.attempt = lease->attempt;
  job.facts.max_attempts = q.getColumn(0).getInt();
  job.facts.lost_count = q.getColumn(1).getInt();
  job.collection_id = q.getColumn(2).getString();
  job.team = q.getColumn(3).getString();
  job.operator_name = q.getColumn(4).getString();
  job.case_id = q.getColumn(5).getString();
  job.facts.discovery = q.getColumn(6).getString().empty();
  return job;
}

int64_t SqliteStore::InsertRound(const AttemptResult& r, const ReportedJob& job) {
  const std::string blob = r.evidence.SerializeAsString();
  SQLite::Statement ins(*db_,
                        "INSERT INTO rounds (collection_id, job_id, attempt, team, operator_name, "
                        "case_id, kernel_time_us, bound_label, evidence, created_ms) VALUES "
                        "(?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, job.collection_id);
  ins.bind(2, r.ref.job_id);
  ins.bind(3, job.facts.attempt);
  ins.bind(4, job.team);
  ins.bind(5, job.operator_name);
  ins.bind(6, job.case_id);
  ins.bind(7, r.evidence.duration().aggregate_us());
  ins.bind(8, r.evidence.bound().label());
  ins.bind(9, blob.data(), static_cast<int>(blob.size()));
  ins.bind(10, r.now_ms);
  ins.exec();
  const int64_t round_id = db_->getLastInsertRowid();
  SQLite::Statement metric(*db_, "INSERT OR REPLACE INTO round_metrics VALUES (?, ?, ?)");
  for (const auto& [name, value] : r.metrics) {
    metric.bind(1, round_id);
    metric.bind(2, name);
    metric.bind(3, value);
    metric.exec();
    metric.reset();
  }
  return round_id;
}

void SqliteStore::FinishJob(const AttemptResult& r, const JobDecision& d, int attempt,
                            int64_t round_id) {
  SQLite::Statement up(*db_,
                       "UPDATE jobs SET state = ?, reason = ?, round_id = ?, kernel_time_us = ?, "
                       "bound_label = ?, lease_expires_ms = NULL, finished_ms = ?, lost_count = "
                       "lost_count + ?, run_ms = ? - leased_ms WHERE id = ?");
  up.bind(1, static_cast<int>(d.next));
  up.bind(2, d.reason);
  if (round_id > 0) {
    up.bind(3, round_id);
    up.bind(4, r.evidence.duration().aggregate_us());
    up.bind(5, r.evidence.bound().label());
  } else {
    up.bind(3);
    up.bind(4);
    up.bind(5);
  }
  if (d.next == v1::JOB_STATE_QUEUED) {
    up.bind(6);
  } else {
    up.bind(6, r.now_ms);
  }
  up.bind(7, d.lost ? 1 : 0);
  // The device time of a success, for placement (core/placement.h).
  if (d.next == v1::JOB_STATE_SUCCEEDED) {
    up.bind(8, r.now_ms);
  } else {
    up.bind(8);
  }
  up.bind(9, r.ref.job_id);
  up.exec();
  if (d.next == v1::JOB_STATE_SUCCEEDED && r.discovery) {
    const std::string blob = r.discovery->SerializeAsString();
    SQLite::Statement found(*db_, "UPDATE jobs SET discovery = ? WHERE id = ?");
    found.bind(1, blob.data(), static_cast<int>(blob.size()));
    found.bind(2, r.ref.job_id);
    found.exec();
  }
  SQLite::Statement rec(*db_, "INSERT INTO result_updates VALUES (?, ?, ?, ?, ?, ?)");
  rec.bind(1, r.update_uuid);
  rec.bind(2, r.ref.job_id);
  rec.bind(3, attempt);
  rec.bind(4, r.ref.fencing_token);
  if (round_id > 0) {
    rec.bind(5, round_id);
  } else {
    rec.bind(5);
  }
  rec.bind(6, r.now_ms);
  rec.exec();
}

}  // namespace npuperf::server
