// PostgresStore: tokens, collections, agents and devices, and the
// state counts behind /metrics.
#include <algorithm>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/rows.h"
#include "server/backends/postgres/statements.h"
#include "server/core/job_state.h"

namespace npuperf::server {
namespace {

// A collection with its job counts and its jobs above after_job_id, at most
// max_jobs of them (0: none, negative: all); its spec only when with_spec. NOT_FOUND when absent or
// another team's (team empty: any team).
absl::StatusOr<v1::Collection> LoadCollection(pqxx::work& tx, const std::string& team,
                                              const std::string& id, int64_t after_job_id,
                                              int32_t max_jobs, bool with_spec = true) {
  auto r = tx.exec_prepared(with_spec ? "collection_get" : "collection_get_without_spec", id);
  if (r.empty() || (!team.empty() && r[0]["team"].as<std::string>() != team)) {
    return absl::NotFoundError(absl::StrCat("collection ", id, " not found"));
  }
  v1::Collection c = PgCollectionFromRow(r[0]);
  for (const auto& row : tx.exec_prepared("collection_counts", id)) {
    CountJob(static_cast<v1::JobState>(row[0].as<int>()), c.mutable_counts(), row[1].as<int>());
  }
  if (max_jobs == 0) return c;
  auto jobs = max_jobs < 0 ? tx.exec_prepared("collection_jobs", id)
                           : tx.exec_prepared("collection_jobs_page", id, after_job_id, max_jobs);
  for (const auto& row : jobs) *c.add_jobs() = PgJobFromRow(row);
  return c;
}

// RESOURCE_EXHAUSTED when the team's queued jobs plus c's would pass
// c.max_team_queued. Holds the team's submit lock until tx ends.
absl::Status CheckTeamQuota(pqxx::work& tx, const NewCollection& c) {
  if (c.max_team_queued <= 0) return absl::OkStatus();
  tx.exec_prepared("team_submit_lock", c.team);
  const auto queued = tx.exec_prepared("team_queued_jobs", c.team)[0][0].as<int64_t>();
  if (queued + static_cast<int64_t>(c.jobs.size()) <= c.max_team_queued) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("team ", c.team, " would have more than ", c.max_team_queued,
                   " queued jobs; wait for some to run or cancel a collection"));
}

// The collection's jobs, queued, in one COPY, and its collection_queue row in
// one statement (migration 0008: the row trigger's per-job count updates made
// a big collection O(n^2)).
void InsertJobs(pqxx::work& tx, const NewCollection& c) {
  if (c.jobs.empty()) return;
  tx.exec("SET LOCAL npuperf.bulk_counts = 'on'");
  pqxx::stream_to copy(
      tx, "jobs",
      std::vector<std::string>{"collection_id", "team", "priority", "operator_name", "case_id",
                               "op_name", "state", "max_attempts", "queued_ms", "duration_key"});
  const int max_attempts = 1 + c.spec.params().retry();
  const int queued = static_cast<int>(v1::JOB_STATE_QUEUED);
  for (const auto& j : c.jobs) {
    if (j.duration_key.empty()) {  // NULL: COPY's \N
      copy << std::make_tuple(c.id, c.team, c.spec.priority(), j.operator_name, j.case_id,
                              j.op_name, queued, max_attempts, c.now_ms, nullptr);
    } else {
      copy << std::make_tuple(c.id, c.team, c.spec.priority(), j.operator_name, j.case_id,
                              j.op_name, queued, max_attempts, c.now_ms, j.duration_key);
    }
  }
  copy.complete();
  tx.exec_prepared("collection_queue_insert", c.id);
  tx.exec("SET LOCAL npuperf.bulk_counts = 'off'");
}

// Inserts the collection and its jobs, or loads the one created earlier with
// the same (team, idempotency key) (then false).
absl::StatusOr<std::pair<v1::Collection, bool>> InsertCollectionTx(pqxx::work& tx,
                                                                   const NewCollection& c) {
  // ON CONFLICT waits for a concurrent insert of the same (team, key) and then
  // skips: the same key always yields the one collection.
  auto ins =
      tx.exec_prepared("collection_insert", c.id, c.team, PgBytes(c.spec.SerializeAsString()),
                       static_cast<int>(v1::COLLECTION_STATE_QUEUED), c.spec.priority(),
                       c.spec.max_concurrent_jobs(), c.idempotency_key, c.now_ms);
  if (ins.empty()) {
    auto existing = tx.exec_prepared("collection_by_key", c.team, c.idempotency_key);
    if (existing.empty()) return absl::AbortedError("idempotency key raced; retry");
    auto loaded = LoadCollection(tx, "", existing[0][0].as<std::string>(), 0, c.answer_jobs);
    if (!loaded.ok()) return loaded.status();
    return std::make_pair(*std::move(loaded), false);
  }
  if (absl::Status s = CheckTeamQuota(tx, c); !s.ok()) return s;
  for (const auto& [key, value] : c.spec.labels()) {
    tx.exec_prepared("label_insert", c.id, key, value);
  }
  InsertJobs(tx, c);
  PgAddEvent(tx, c.now_ms, c.id, 0, EventKind::kCollectionSubmitted,
             absl::StrCat(c.jobs.size(), " jobs, team ", c.team));
  auto loaded = LoadCollection(tx, "", c.id, 0, c.answer_jobs);
  if (!loaded.ok()) return loaded.status();
  return std::make_pair(*std::move(loaded), true);
}

}  // namespace

absl::StatusOr<std::pair<std::string, std::string>> PostgresStore::LookupToken(
    const std::string& hash) {
  using Out = std::pair<std::string, std::string>;
  return pool_->Run("lookup token", [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    auto r = tx.exec_prepared("token_lookup", hash);
    if (r.empty()) return absl::NotFoundError("unknown token");
    return Out(r[0][0].as<std::string>(), r[0][1].as<std::string>());
  });
}

absl::Status PostgresStore::InsertToken(const std::string& hash, const std::string& kind,
                                        const std::string& name, int64_t now_ms) {
  return pool_->Run("insert token", [&](pqxx::work& tx) -> absl::Status {
    tx.exec_prepared("token_insert", hash, kind, name, now_ms);
    return absl::OkStatus();
  });
}

absl::StatusOr<int64_t> PostgresStore::CountTokens() {
  return pool_->Run("count tokens", [&](pqxx::work& tx) -> absl::StatusOr<int64_t> {
    return tx.exec_prepared("token_count")[0][0].as<int64_t>();
  });
}

absl::Status PostgresStore::InsertUiSession(const std::string& id_sha256, const std::string& team,
                                            int64_t created_ms, int64_t expires_ms) {
  return pool_->Run("insert ui session", [&](pqxx::work& tx) -> absl::Status {
    tx.exec_prepared("ui_session_insert", id_sha256, team, created_ms, expires_ms);
    return absl::OkStatus();
  });
}

absl::StatusOr<std::string> PostgresStore::LookupUiSession(const std::string& id_sha256,
                                                           int64_t now_ms) {
  // Autocommit: the deletion of an expired session stands although the
  // answer is NOT_FOUND (a rolled-back transaction would undo it).
  return pool_->RunAutocommit("lookup ui session",
                              [&](pqxx::nontransaction& tx) -> absl::StatusOr<std::string> {
                                auto r = tx.exec_prepared("ui_session_lookup", id_sha256);
                                if (r.empty()) return absl::NotFoundError("unknown session");
                                if (now_ms < r[0][1].as<int64_t>())
                                  return r[0][0].as<std::string>();
                                tx.exec_prepared("ui_session_delete", id_sha256);
                                return absl::NotFoundError("session expired");
                              });
}

absl::Status PostgresStore::DeleteUiSession(const std::string& id_sha256) {
  return pool_->Run("delete ui session", [&](pqxx::work& tx) -> absl::Status {
    tx.exec_prepared("ui_session_delete", id_sha256);
    return absl::OkStatus();
  });
}

absl::StatusOr<int64_t> PostgresStore::DeleteExpiredUiSessions(int64_t now_ms) {
  return pool_->Run("delete expired ui sessions", [&](pqxx::work& tx) -> absl::StatusOr<int64_t> {
    return static_cast<int64_t>(tx.exec_prepared("ui_session_sweep", now_ms).affected_rows());
  });
}

absl::StatusOr<std::pair<v1::Collection, bool>> PostgresStore::InsertCollection(
    const NewCollection& c) {
  return pool_->Run("insert collection", [&](pqxx::work& tx) {
    auto inserted = InsertCollectionTx(tx, c);
    if (inserted.ok() && inserted->second) PgNotify(tx, StoreChange::kClaimable, replica_id_);
    return inserted;
  });
}

absl::StatusOr<v1::Collection> PostgresStore::GetCollection(const std::string& team,
                                                            const std::string& id) {
  return pool_->Run("get collection " + id,
                    [&](pqxx::work& tx) { return LoadCollection(tx, team, id, 0, -1); });
}

absl::StatusOr<v1::Collection> PostgresStore::GetCollectionPage(const std::string& team,
                                                                const std::string& id,
                                                                int64_t after_job_id,
                                                                int32_t max_jobs) {
  return pool_->Run("get collection " + id, [&](pqxx::work& tx) {
    return LoadCollection(tx, team, id, after_job_id, std::max(max_jobs, 0));
  });
}

absl::StatusOr<v1::Collection> PostgresStore::GetCollectionPageWithoutSpec(const std::string& team,
                                                                           const std::string& id,
                                                                           int64_t after_job_id,
                                                                           int32_t max_jobs) {
  return pool_->Run("get collection " + id, [&](pqxx::work& tx) {
    return LoadCollection(tx, team, id, after_job_id, std::max(max_jobs, 0), /*with_spec=*/false);
  });
}

absl::StatusOr<std::map<std::string, std::vector<int64_t>>> PostgresStore::RecentRunTimes(
    const std::vector<std::string>& keys, int per_key) {
  using Out = std::map<std::string, std::vector<int64_t>>;
  // A text[] literal; hex needs no quoting.
  const std::vector<std::string> hex = DurationKeysToAsk(keys);
  if (hex.empty() || per_key <= 0) return Out();
  const std::string array = absl::StrCat("{", absl::StrJoin(hex, ","), "}");
  return pool_->Run("recent run times", [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    Out out;
    for (const auto& row : tx.exec_prepared("recent_run_times", array, per_key)) {
      out[row[0].as<std::string>()].push_back(row[1].as<int64_t>());
    }
    return out;
  });
}

absl::StatusOr<std::vector<QueuedCount>> PostgresStore::CountQueuedByCollection(int32_t limit) {
  using Out = std::vector<QueuedCount>;
  return pool_->Run("count queued jobs", [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    Out out;
    for (const auto& row : tx.exec_prepared("queued_by_collection", limit)) {
      out.push_back({row[0].as<std::string>(), row[1].as<int64_t>(), row[2].as<int64_t>(0)});
    }
    return out;
  });
}

absl::StatusOr<std::vector<v1::Collection>> PostgresStore::ListCollections(
    const CollectionFilter& f) {
  using Out = std::vector<v1::Collection>;
  std::vector<int> states(f.states.begin(), f.states.end());
  return pool_->Run("list collections", [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    auto ids = tx.exec_prepared("collection_list", f.team, f.before_created_ms, f.before_id,
                                PgLabelsJson(f.labels), PgIntArray(states), f.limit);
    Out out;
    for (const auto& row : ids) {
      auto c = LoadCollection(tx, f.team, row[0].as<std::string>(), 0, 0);
      if (!c.ok()) return c.status();
      out.push_back(*std::move(c));
    }
    return out;
  });
}

absl::StatusOr<std::vector<CancelOrder>> PostgresStore::CancelCollection(const std::string& team,
                                                                         const std::string& id,
                                                                         const std::string& reason,
                                                                         int64_t now_ms) {
  using Out = std::vector<CancelOrder>;
  return pool_->Run("cancel " + id, [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    // The collection row lock orders us with claims of this collection.
    auto c = tx.exec_prepared("collection_lock", id);
    if (c.empty() || (!team.empty() && c[0][0].as<std::string>() != team)) {
      return absl::NotFoundError(absl::StrCat("collection ", id, " not found"));
    }
    tx.exec_prepared("collection_mark_cancel", reason.empty() ? "cancelled" : reason, id);
    // Counted once for the whole statement (migration 0008).
    tx.exec("SET LOCAL npuperf.bulk_counts = 'on'");
    const auto cancelled = tx.exec_prepared("collection_cancel_queued",
                                            absl::StrCat("cancelled: ", reason), now_ms, id);
    tx.exec_prepared("collection_queue_unqueue", static_cast<int64_t>(cancelled.affected_rows()),
                     id);
    tx.exec_prepared("collection_queue_drop_idle", id);
    tx.exec("SET LOCAL npuperf.bulk_counts = 'off'");
    Out orders;
    for (const auto& row : tx.exec_prepared("collection_live_jobs", id)) {
      orders.push_back(
          {row[1].as<std::string>(""), row[0].as<int64_t>(), row[2].as<int64_t>(), reason});
    }
    PgAddEvent(tx, now_ms, id, 0, EventKind::kCollectionCancelled, reason);
    PgRefreshCollectionState(tx, id, now_ms, /*cancelled=*/true);
    PgNotify(tx, StoreChange::kUpdated, replica_id_);
    return orders;
  });
}

absl::StatusOr<StateCounts> PostgresStore::CountByState() {
  static_assert(v1::COLLECTION_STATE_SUCCEEDED == 3 && v1::COLLECTION_STATE_FAILED == 4 &&
                v1::COLLECTION_STATE_CANCELLED == 5);
  // The finished collections are counted a batch a statement: the first
  // batch with the read, any more each in its own transaction, so a long
  // first pass (every collection finished before migration 0027) keeps what
  // it counted even if a later batch fails.
  bool full_batch = false;
  absl::StatusOr<StateCounts> counts =
      pool_->Run("count by state", [&](pqxx::work& tx) -> absl::StatusOr<StateCounts> {
        StateCounts out;
        for (const auto& row : tx.exec_prepared("count_jobs")) {
          if (row[0].is_null()) {
            full_batch = row[1].as<int>() != 0;
          } else {
            out.jobs[static_cast<v1::JobState>(row[0].as<int>())] = row[1].as<int64_t>();
          }
        }
        for (const auto& row : tx.exec_prepared("count_agents")) {
          out.agents[row[0].as<std::string>()] = row[1].as<int64_t>();
        }
        for (const auto& row : tx.exec_prepared("count_devices")) {
          out.devices[DeviceStatusName(row[0].as<bool>(), row[1].as<int>(), row[2].as<bool>())] +=
              row[3].as<int64_t>();
        }
        return out;
      });
  // More may wait after a full batch. The counts above are exact either way,
  // so a failed batch is left to the next refresh, not reported.
  while (counts.ok() && full_batch) {
    absl::StatusOr<bool> full = pool_->RunAutocommit(
        "count finished jobs", [&](pqxx::nontransaction& tx) -> absl::StatusOr<bool> {
          return tx.exec_prepared1("count_newly_finished")[0].as<int>() != 0;
        });
    if (!full.ok()) {
      LogWarning("postgres",
                 absl::StrCat("counting finished collections: ", full.status().ToString()));
      break;
    }
    full_batch = *full;
  }
  return counts;
}

}  // namespace npuperf::server
