// PostgresStore: progress and results of attempts (RecordProgress,
// RecordResult).
#include <map>
#include <optional>
#include <string>

#include <pqxx/pqxx>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "nlohmann/json.hpp"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/rows.h"
#include "server/backends/postgres/statements.h"
#include "server/core/job_rules.h"
#include "server/core/job_state.h"

namespace npuperf::server {
namespace {

// What LockJobCollection saw under the lock.
struct CollectionLock {
  std::optional<bool> cancelled;             // a cancel request; nullopt: unknown job
  std::optional<v1::CollectionState> state;  // as stored
};

// The lease as result_job_lock reads it (columns 0-2 and 8-11).
LeaseFacts LeaseOf(const pqxx::row& job) {
  LeaseFacts f;
  f.state = static_cast<v1::JobState>(job[0].as<int>());
  f.fencing_token = job[1].as<int64_t>();
  f.attempt = job[2].as<int>();
  f.agent_id = job[8].as<std::string>("");
  f.host = job[9].as<std::string>("");
  f.lease_expires_ms = job[10].as<int64_t>(0);
  if (!job[11].is_null()) f.secret_sha256 = job[11].as<std::string>();
  return f;
}

// Locks the row of the job's collection (the lock order of statements.h).
CollectionLock LockJobCollection(pqxx::work& tx, int64_t job_id) {
  auto c = tx.exec_prepared("job_collection_lock", job_id);
  if (c.empty()) return {};
  return {!c[0][1].as<std::string>().empty(), static_cast<v1::CollectionState>(c[0][2].as<int>())};
}

// The ack of an update applied before, from its (job_id, round_id).
// INVALID_ARGUMENT when the uuid was applied to another job.
absl::StatusOr<ResultAck> AppliedBefore(const AttemptResult& r, const pqxx::row& seen) {
  if (seen[0].as<int64_t>() != r.ref.job_id) {
    return absl::InvalidArgumentError("update_uuid reused for another job");
  }
  return ResultAck{seen[1].as<int64_t>(0), true, ""};
}

// Whether a result stores a round: a success with evidence, not a candidate table.
bool StoresRound(const AttemptResult& r) {
  return r.outcome == v1::ATTEMPT_OUTCOME_SUCCEEDED && !r.discovery;
}

// What a round stores of a result, made once per RecordResult (the one call,
// the general path after it and every rerun write the same bytes): the
// serialized evidence and the figures (PgFiguresJson). Empty when the result
// stores no round (StoresRound).
struct RoundBytes {
  std::string evidence;
  std::string figures;
};

// Stores a success's round (round_insert_ahead): its id, or nullopt when
// nothing was stored (not a success, a candidate table, the job's attempt
// moved on, or the job has its round already).
std::optional<int64_t> StoreRoundAhead(pqxx::work& tx, const AttemptResult& r,
                                       const RoundBytes& round) {
  if (!StoresRound(r)) return std::nullopt;
  const pqxx::row row = tx.exec_prepared1(
      "round_insert_ahead", r.ref.job_id, r.ref.attempt, r.evidence.duration().aggregate_us(),
      r.evidence.bound().label(), PgBytes(round.evidence), r.now_ms, round.figures);
  if (row[0].is_null()) return std::nullopt;
  return row[0].as<int64_t>();
}

// The detail of a result's job_result event.
std::string ResultEventDetail(const JobDecision& d) {
  return absl::StrCat(JobStateName(d.next), " ", d.reason);
}

// After a job ended or was requeued: the collection's state, recounted
// unless it stays RUNNING (ResultKeepsCollectionRunning; others_unfinished as
// job_finish returned it).
void RefreshAfterResult(pqxx::work& tx, const std::string& collection_id, v1::JobState next,
                        int64_t now_ms, bool cancelled, std::optional<v1::CollectionState> stored,
                        bool others_unfinished) {
  if (ResultKeepsCollectionRunning(stored, next, others_unfinished)) return;
  PgRefreshCollectionState(tx, collection_id, now_ms, cancelled, stored);
}

// Applies a result exactly once per update_uuid under its collection's and
// job's locks; `ahead` is the round StoreRoundAhead stored, used when the
// result is applied as a success. notify_payload: this replica's id, sent on
// kPgJobsChannel with the job's transition (its device is free, or the job is
// queued again).
absl::StatusOr<ResultAck> ApplyResultLocked(pqxx::work& tx, const AttemptResult& r,
                                            const std::string& notify_payload,
                                            const RoundBytes& round_bytes,
                                            std::optional<int64_t> ahead) {
  // Collection, then job: a concurrent resend of the same update (another
  // replica) waits here and then finds the update recorded below.
  const CollectionLock lock = LockJobCollection(tx, r.ref.job_id);
  const bool cancelled = lock.cancelled.value_or(false);
  auto job = tx.exec_prepared("result_job_lock", r.ref.job_id, r.update_uuid);
  if (!job.empty() && !job[0][6].is_null()) return AppliedBefore(r, job[0].slice(6, 8));
  const std::optional<AgentRefusal> refused =
      job.empty() ? AgentRefusal::kUnknownJob : CheckLease(LeaseOf(job[0]), r.ref, r.agent_id);
  if (refused) {
    // Not applicable as it stands: look for the update again in a fresh
    // snapshot (the job lock may have waited for its concurrent resend).
    auto seen = tx.exec_prepared("result_seen", r.update_uuid);
    if (!seen.empty()) return AppliedBefore(r, seen[0]);
    return LeaseRefused(*refused, r.ref);
  }
  const pqxx::row row = job[0];
  ResultAck ack{0, false, row[5].as<std::string>()};
  const JobFacts facts{row[2].as<int>(), row[3].as<int>(), row[4].as<int>(), cancelled,
                       row[12].as<std::string>().empty()};
  const JobDecision d = DecideResult(r, facts);
  if (d.next == v1::JOB_STATE_SUCCEEDED && !r.discovery) {
    // Not stored ahead only when a concurrent resend's round was in the way
    // and then rolled back: the job is locked and its lease current now.
    const std::optional<int64_t> round = ahead ? ahead : StoreRoundAhead(tx, r, round_bytes);
    if (!round) {
      return absl::InternalError(
          absl::StrCat("job ", r.ref.job_id, ": a round exists while its lease is current"));
    }
    ack.round_id = *round;
  }
  const pqxx::row finished =
      tx.exec_prepared1("job_finish", static_cast<int>(d.next), d.reason, ack.round_id,
                        r.evidence.duration().aggregate_us(), r.evidence.bound().label(),
                        d.next == v1::JOB_STATE_QUEUED ? int64_t{0} : r.now_ms, d.lost ? 1 : 0,
                        r.ref.job_id, r.update_uuid, facts.attempt, r.ref.fencing_token, r.now_ms,
                        ack.collection_id, ResultEventDetail(d), notify_payload,
                        d.next == v1::JOB_STATE_SUCCEEDED ? r.now_ms : int64_t{0});
  if (d.next == v1::JOB_STATE_SUCCEEDED && r.discovery) {
    tx.exec_prepared("job_discovery_set", PgBytes(r.discovery->SerializeAsString()), r.ref.job_id);
  }
  RefreshAfterResult(tx, ack.collection_id, d.next, r.now_ms, cancelled, lock.state,
                     finished[0].as<bool>());
  return ack;
}

// The general path. The round goes in first, outside the locks (issue 36:
// every result of a collection waited for the round insert of the one before
// it); the checks under the locks decide. A round they did not keep is
// removed in the same transaction, so no other session ever sees it; a
// refusal (an error) rolls it back with everything else.
absl::StatusOr<ResultAck> ApplyResult(pqxx::work& tx, const AttemptResult& r,
                                      const std::string& notify_payload, const RoundBytes& round) {
  const std::optional<int64_t> ahead = StoreRoundAhead(tx, r, round);
  absl::StatusOr<ResultAck> ack = ApplyResultLocked(tx, r, notify_payload, round, ahead);
  if (ahead && ack.ok() && ack->round_id != *ahead) tx.exec_prepared0("round_discard", *ahead);
  return ack;
}

// The common result in one call (npuperf_result, in autocommit): a success
// `d` (DecideSuccessOfPlainJob) on a current lease that leaves its collection
// RUNNING. Its ack, or nullopt when the general path must decide: nothing was
// written then.
std::optional<ResultAck> ApplyInOneCall(pqxx::nontransaction& tx, const AttemptResult& r,
                                        const JobDecision& d, const std::string& notify_payload,
                                        const RoundBytes& round) {
  const pqxx::row row = tx.exec_prepared1(
      "result_one_call", r.ref.job_id, r.ref.attempt, r.ref.fencing_token, r.agent_id,
      Sha256Hex(r.ref.lease_secret), r.update_uuid, r.evidence.duration().aggregate_us(),
      r.evidence.bound().label(), PgBytes(round.evidence), r.now_ms, round.figures,
      static_cast<int>(d.next), d.reason, static_cast<int>(v1::COLLECTION_STATE_RUNNING),
      ResultEventDetail(d), notify_payload);
  if (row[0].as<std::string>() != "applied") return std::nullopt;
  return ResultAck{row[1].as<int64_t>(), false, row[2].as<std::string>()};
}

}  // namespace

absl::StatusOr<bool> PostgresStore::RecordProgress(const std::string& agent_id,
                                                   const AttemptRef& ref,
                                                   const v1::JobProgress& progress, int64_t now_ms,
                                                   int64_t lease_ttl_ms) {
  // The common case first: one statement, no collection lock, and no
  // BEGIN and COMMIT round trips (it is its own transaction, and a rerun
  // after a serialization failure writes the same report again).
  absl::StatusOr<std::optional<bool>> common = pool_->RunAutocommit(
      "record progress", [&](pqxx::nontransaction& tx) -> absl::StatusOr<std::optional<bool>> {
        auto running = tx.exec_prepared(
            "progress_running", PgBytes(progress.SerializeAsString()), now_ms + lease_ttl_ms,
            ref.job_id, ref.fencing_token, ref.attempt, replica_id_, agent_id,
            Sha256Hex(ref.lease_secret), static_cast<int>(v1::COLLECTION_STATE_RUNNING));
        if (running.empty()) return std::nullopt;
        return !running[0][0].as<std::string>("").empty();
      });
  if (!common.ok()) return common.status();
  if (common->has_value()) return **common;
  return RecordProgressLocked(agent_id, ref, progress, now_ms, lease_ttl_ms);
}

absl::StatusOr<LeaseRenewal> PostgresStore::RecordProgressMany(
    const std::string& agent_id, const std::vector<ProgressReport>& reports, int64_t now_ms,
    int64_t lease_ttl_ms) {
  if (reports.empty()) return LeaseRenewal();
  // Each job once (the JSON must not name one twice, or its row would be
  // written twice).
  const std::vector<const ProgressReport*> last = LastReportPerJob(reports);
  nlohmann::json rows = nlohmann::json::array();
  for (const ProgressReport* r : last) {
    rows.push_back({{"id", r->ref.job_id},
                    {"token", r->ref.fencing_token},
                    {"attempt", r->ref.attempt},
                    {"secret", Sha256Hex(r->ref.lease_secret)},
                    {"progress", absl::BytesToHexString(r->progress.SerializeAsString())}});
  }
  // One statement for every report whose collection is RUNNING, in
  // autocommit like progress_running (a rerun writes the same reports).
  struct Held {
    bool cancelled = false;
    bool written = false;
  };
  absl::StatusOr<std::map<int64_t, Held>> held = pool_->RunAutocommit(
      "record progress", [&](pqxx::nontransaction& tx) -> absl::StatusOr<std::map<int64_t, Held>> {
        std::map<int64_t, Held> out;
        for (const auto& row :
             tx.exec_prepared("progress_many", rows.dump(), now_ms + lease_ttl_ms, agent_id,
                              static_cast<int>(v1::COLLECTION_STATE_RUNNING), replica_id_)) {
          out[row[0].as<int64_t>()] = {row[1].as<bool>(), row[2].as<bool>()};
        }
        return out;
      });
  if (!held.ok()) return held.status();
  LeaseRenewal out;
  for (const ProgressReport* r : last) {
    auto it = held->find(r->ref.job_id);
    if (it == held->end()) continue;  // refused: nothing written
    std::optional<bool> cancel;
    if (it->second.written) {
      cancel = it->second.cancelled;
    } else {
      // Not a RUNNING collection's, or a result overtook it: the locked path decides.
      absl::StatusOr<bool> locked =
          RecordProgressLocked(agent_id, r->ref, r->progress, now_ms, lease_ttl_ms);
      if (locked.ok()) {
        cancel = *locked;
      } else if (!AgentRefusalOf(locked.status())) {
        return locked.status();
      }
    }
    if (!cancel) continue;
    out.renewed.push_back(r->ref);
    if (*cancel) out.cancelled.push_back(r->ref);
  }
  return out;
}

absl::StatusOr<bool> PostgresStore::RecordProgressLocked(const std::string& agent_id,
                                                         const AttemptRef& ref,
                                                         const v1::JobProgress& progress,
                                                         int64_t now_ms, int64_t lease_ttl_ms) {
  return pool_->Run("record progress", [&](pqxx::work& tx) -> absl::StatusOr<bool> {
    const CollectionLock lock = LockJobCollection(tx, ref.job_id);
    const std::optional<bool> cancel = lock.cancelled;
    if (!cancel) return LeaseRefused(AgentRefusal::kUnknownJob, ref);
    auto r = tx.exec_prepared("progress_record", PgBytes(progress.SerializeAsString()),
                              now_ms + lease_ttl_ms, ref.job_id, ref.fencing_token, ref.attempt,
                              replica_id_, agent_id, Sha256Hex(ref.lease_secret));
    if (r.empty()) {
      const auto lease = PgLoadLease(tx, ref.job_id);
      if (!lease) return LeaseRefused(AgentRefusal::kUnknownJob, ref);
      return LeaseRefused(CheckLease(*lease, ref, agent_id).value_or(AgentRefusal::kStaleLease),
                          ref);
    }
    if (ProgressNeedsCollectionRefresh(lock.state)) {
      PgRefreshCollectionState(tx, r[0][0].as<std::string>(), now_ms, *cancel, lock.state);
    }
    return *cancel;
  });
}

absl::StatusOr<ResultAck> PostgresStore::RecordResult(const AttemptResult& r) {
  RoundBytes round;
  if (StoresRound(r)) {
    absl::StatusOr<std::string> json = PgFiguresJson(r.metrics);
    if (!json.ok()) return json.status();
    round.figures = *std::move(json);
    round.evidence = r.evidence.SerializeAsString();
  }
  if (const std::optional<JobDecision> d = DecideSuccessOfPlainJob(r)) {
    absl::StatusOr<std::optional<ResultAck>> one = pool_->RunAutocommit(
        "record result", [&](pqxx::nontransaction& tx) -> absl::StatusOr<std::optional<ResultAck>> {
          return ApplyInOneCall(tx, r, *d, replica_id_, round);
        });
    if (one.ok() && one->has_value()) return **one;
    // UNAVAILABLE: a broken connection, the call may have committed. The
    // general path runs on a fresh one and finds the update if it did.
    if (!one.ok() && !absl::IsUnavailable(one.status())) return one.status();
  }
  return pool_->Run("record result",
                    [&](pqxx::work& tx) { return ApplyResult(tx, r, replica_id_, round); });
}

}  // namespace npuperf::server
