// SqliteStore: tokens, collections, and the state counts behind /metrics.
#include <algorithm>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/rows.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/job_state.h"

namespace npuperf::server {

absl::StatusOr<std::pair<std::string, std::string>> SqliteStore::LookupToken(
    const std::string& hash) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, "SELECT kind, name FROM tokens WHERE hash = ?");
    q.bind(1, hash);
    if (!q.executeStep()) return absl::NotFoundError("unknown token");
    return std::make_pair(q.getColumn(0).getString(), q.getColumn(1).getString());
  } catch (...) {
    return CurrentSqliteError("lookup token");
  }
}

absl::Status SqliteStore::InsertToken(const std::string& hash, const std::string& kind,
                                      const std::string& name, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_,
                        "INSERT INTO tokens (hash, kind, name, created_ms) VALUES (?, ?, ?, ?)");
    q.bind(1, hash);
    q.bind(2, kind);
    q.bind(3, name);
    q.bind(4, now_ms);
    q.exec();
    return absl::OkStatus();
  } catch (...) {
    return CurrentSqliteError("insert token");
  }
}

absl::StatusOr<int64_t> SqliteStore::CountTokens() {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, "SELECT COUNT(*) FROM tokens");
    q.executeStep();
    return q.getColumn(0).getInt64();
  } catch (...) {
    return CurrentSqliteError("count tokens");
  }
}

absl::Status SqliteStore::InsertUiSession(const std::string& id_sha256, const std::string& team,
                                          int64_t created_ms, int64_t expires_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_,
                        "INSERT INTO ui_sessions (id_sha256, team, created_ms, expires_ms) "
                        "VALUES (?, ?, ?, ?)");
    q.bind(1, id_sha256);
    q.bind(2, team);
    q.bind(3, created_ms);
    q.bind(4, expires_ms);
    q.exec();
    return absl::OkStatus();
  } catch (...) {
    return CurrentSqliteError("insert ui session");
  }
}

absl::StatusOr<std::string> SqliteStore::LookupUiSession(const std::string& id_sha256,
                                                         int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, "SELECT team, expires_ms FROM ui_sessions WHERE id_sha256 = ?");
    q.bind(1, id_sha256);
    if (!q.executeStep()) return absl::NotFoundError("unknown session");
    if (now_ms < q.getColumn(1).getInt64()) return q.getColumn(0).getString();
    q.reset();
    SQLite::Statement d(*db_, "DELETE FROM ui_sessions WHERE id_sha256 = ?");
    d.bind(1, id_sha256);
    d.exec();
    return absl::NotFoundError("session expired");
  } catch (...) {
    return CurrentSqliteError("lookup ui session");
  }
}

absl::Status SqliteStore::DeleteUiSession(const std::string& id_sha256) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement d(*db_, "DELETE FROM ui_sessions WHERE id_sha256 = ?");
    d.bind(1, id_sha256);
    d.exec();
    return absl::OkStatus();
  } catch (...) {
    return CurrentSqliteError("delete ui session");
  }
}

absl::StatusOr<int64_t> SqliteStore::DeleteExpiredUiSessions(int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement d(*db_, "DELETE FROM ui_sessions WHERE expires_ms <= ?");
    d.bind(1, now_ms);
    return static_cast<int64_t>(d.exec());
  } catch (...) {
    return CurrentSqliteError("delete expired ui sessions");
  }
}

absl::StatusOr<std::pair<v1::Collection, bool>> SqliteStore::InsertCollection(
    const NewCollection& c) {
  absl::MutexLock lock(&mu_);
  std::optional<std::string> existing;
  try {
    existing = InsertCollectionTx(c);
  } catch (...) {
    return CurrentSqliteError("insert collection");
  }
  if (existing.has_value() && existing->empty()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("team ", c.team, " would have more than ", c.max_team_queued,
                     " queued jobs; wait for some to run or cancel a collection"));
  }
  auto collection = LoadCollection("", existing.value_or(c.id), 0, c.answer_jobs);
  if (!collection.ok()) return collection.status();
  return std::make_pair(*std::move(collection), !existing.has_value());
}

std::optional<std::string> SqliteStore::InsertCollectionTx(const NewCollection& c) {
  SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
  if (!c.idempotency_key.empty()) {
    SQLite::Statement q(*db_, "SELECT id FROM collections WHERE team = ? AND idempotency_key = ?");
    q.bind(1, c.team);
    q.bind(2, c.idempotency_key);
    if (q.executeStep()) return q.getColumn(0).getString();
  }
  if (c.max_team_queued > 0) {
    SQLite::Statement q(*db_, "SELECT COUNT(*) FROM jobs WHERE team = ? AND state = ?");
    q.bind(1, c.team);
    q.bind(2, kQueued);
    q.executeStep();
    if (q.getColumn(0).getInt64() + static_cast<int64_t>(c.jobs.size()) > c.max_team_queued) {
      return std::string();  // over the quota: nothing inserted
    }
  }
  SQLite::Statement ins(*db_,
                        "INSERT INTO collections (id, team, spec, state, priority, "
                        "max_concurrent, idempotency_key, created_ms) VALUES (?,?,?,?,?,?,?,?)");
  const std::string spec = c.spec.SerializeAsString();
  ins.bind(1, c.id);
  ins.bind(2, c.team);
  ins.bind(3, spec.data(), static_cast<int>(spec.size()));
  ins.bind(4, static_cast<int>(v1::COLLECTION_STATE_QUEUED));
  ins.bind(5, c.spec.priority());
  ins.bind(6, c.spec.max_concurrent_jobs());
  if (c.idempotency_key.empty()) {
    ins.bind(7);
  } else {
    ins.bind(7, c.idempotency_key);
  }
  ins.bind(8, c.now_ms);
  ins.exec();
  for (const auto& [key, value] : c.spec.labels()) {
    SQLite::Statement l(*db_, "INSERT INTO collection_labels VALUES (?, ?, ?)");
    l.bind(1, c.id);
    l.bind(2, key);
    l.bind(3, value);
    l.exec();
  }
  SQLite::Statement job(*db_,
                        "INSERT INTO jobs (collection_id, team, priority, operator_name, case_id, "
                        "op_name, state, max_attempts, queued_ms, duration_key) VALUES "
                        "(?,?,?,?,?,?,?,?,?,?)");
  for (const auto& j : c.jobs) {
    job.bind(1, c.id);
    job.bind(2, c.team);
    job.bind(3, c.spec.priority());
    job.bind(4, j.operator_name);
    job.bind(5, j.case_id);
    job.bind(6, j.op_name);
    job.bind(7, static_cast<int>(v1::JOB_STATE_QUEUED));
    job.bind(8, 1 + c.spec.params().retry());
    job.bind(9, c.now_ms);
    if (j.duration_key.empty()) {
      job.bind(10);
    } else {
      job.bind(10, j.duration_key);
    }
    job.exec();
    job.reset();
  }
  AddEvent(c.now_ms, c.id, 0, EventKind::kCollectionSubmitted,
           absl::StrCat(c.jobs.size(), " jobs, team ", c.team));
  tx.commit();
  return std::nullopt;
}

absl::StatusOr<v1::Collection> SqliteStore::GetCollection(const std::string& team,
                                                          const std::string& id) {
  absl::MutexLock lock(&mu_);
  return LoadCollection(team, id, 0, -1);
}

absl::StatusOr<v1::Collection> SqliteStore::GetCollectionPage(const std::string& team,
                                                              const std::string& id,
                                                              int64_t after_job_id,
                                                              int32_t max_jobs) {
  absl::MutexLock lock(&mu_);
  return LoadCollection(team, id, after_job_id, std::max(max_jobs, 0));
}

absl::StatusOr<v1::Collection> SqliteStore::GetCollectionPageWithoutSpec(const std::string& team,
                                                                         const std::string& id,
                                                                         int64_t after_job_id,
                                                                         int32_t max_jobs) {
  absl::MutexLock lock(&mu_);
  return LoadCollection(team, id, after_job_id, std::max(max_jobs, 0), /*with_spec=*/false);
}

absl::StatusOr<v1::Collection> SqliteStore::LoadCollection(const std::string& team,
                                                           const std::string& id,
                                                           int64_t after_job_id, int32_t max_jobs,
                                                           bool with_spec) {
  try {
    // Without the spec its blob (and its overflow pages) is never read.
    SQLite::Statement q(
        *db_,
        absl::StrCat("SELECT ", with_spec ? kCollectionColumns : kCollectionColumnsWithoutSpec,
                     " FROM collections WHERE id = ?"));
    q.bind(1, id);
    if (!q.executeStep() || (!team.empty() && q.getColumn("team").getString() != team)) {
      return absl::NotFoundError(absl::StrCat("collection ", id, " not found"));
    }
    v1::Collection c = CollectionFromRow(q);
    SQLite::Statement counts(
        *db_, "SELECT state, COUNT(*) FROM jobs WHERE collection_id = ? GROUP BY state");
    counts.bind(1, id);
    while (counts.executeStep()) {
      CountJob(static_cast<v1::JobState>(counts.getColumn(0).getInt()), c.mutable_counts(),
               counts.getColumn(1).getInt());
    }
    if (max_jobs == 0) return c;
    SQLite::Statement jobs(*db_, absl::StrCat("SELECT ", kJobColumns,
                                              " FROM jobs WHERE collection_id = ? AND id > ? "
                                              "ORDER BY id LIMIT ?"));
    jobs.bind(1, id);
    jobs.bind(2, after_job_id);
    jobs.bind(3, max_jobs);  // negative: no limit
    while (jobs.executeStep()) *c.add_jobs() = JobFromRow(jobs);
    return c;
  } catch (...) {
    return CurrentSqliteError("get collection " + id);
  }
}

absl::StatusOr<std::map<std::string, std::vector<int64_t>>> SqliteStore::RecentRunTimes(
    const std::vector<std::string>& keys, int per_key) {
  // The keys travel as one JSON array (json_each); hex needs no escaping.
  std::vector<std::string> quoted;
  for (const std::string& k : DurationKeysToAsk(keys))
    quoted.push_back(absl::StrCat("\"", k, "\""));
  std::map<std::string, std::vector<int64_t>> out;
  if (quoted.empty() || per_key <= 0) return out;
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_,
                        "SELECT duration_key, run_ms FROM (SELECT duration_key, run_ms, "
                        "ROW_NUMBER() OVER (PARTITION BY duration_key ORDER BY finished_ms DESC, "
                        "id DESC) AS n FROM jobs WHERE run_ms IS NOT NULL AND duration_key IN "
                        "(SELECT value FROM json_each(?))) WHERE n <= ? ORDER BY duration_key, n");
    q.bind(1, absl::StrCat("[", absl::StrJoin(quoted, ","), "]"));
    q.bind(2, per_key);
    while (q.executeStep()) out[q.getColumn(0).getString()].push_back(q.getColumn(1).getInt64());
    return out;
  } catch (...) {
    return CurrentSqliteError("recent run times");
  }
}

absl::StatusOr<std::vector<QueuedCount>> SqliteStore::CountQueuedByCollection(int32_t limit) {
  absl::MutexLock lock(&mu_);
  try {
    // Each collection counted from the index alone; its oldest queued job is
    // its head (as PostgreSQL's queued_by_collection).
    SQLite::Statement q(*db_,
                        absl::StrCat(kQueueHeadsCte,
                                     "SELECT h.cid, (SELECT COUNT(*) FROM jobs INDEXED BY "
                                     "jobs_by_collection_state WHERE collection_id = h.cid AND "
                                     "state = 1), j.queued_ms FROM heads h JOIN jobs j ON j.id = "
                                     "h.id ORDER BY h.id LIMIT ?"));
    q.bind(1, limit);
    std::vector<QueuedCount> out;
    while (q.executeStep()) {
      out.push_back(
          {q.getColumn(0).getString(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64()});
    }
    return out;
  } catch (...) {
    return CurrentSqliteError("count queued jobs");
  }
}

absl::StatusOr<std::vector<v1::Collection>> SqliteStore::ListCollections(
    const CollectionFilter& f) {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> ids;
  try {
    std::string sql = "SELECT c.id FROM collections c WHERE c.team = :team";
    if (f.before_created_ms > 0) {
      sql += " AND (c.created_ms < :before OR (c.created_ms = :before AND c.id < :before_id))";
    }
    AppendLabelFilter(&sql, f.labels.size(), "c.id");
    sql += " ORDER BY c.created_ms DESC, c.id DESC";
    SQLite::Statement q(*db_, sql);
    q.bind(":team", f.team);
    if (f.before_created_ms > 0) {
      q.bind(":before", f.before_created_ms);
      q.bind(":before_id", f.before_id);
    }
    BindLabelFilter(q, f.labels);
    while (q.executeStep()) ids.push_back(q.getColumn(0).getString());
  } catch (...) {
    return CurrentSqliteError("list collections");
  }
  std::vector<v1::Collection> out;
  for (const auto& id : ids) {
    if (static_cast<int32_t>(out.size()) >= f.limit) break;
    auto c = LoadCollection(f.team, id, 0, 0);
    if (!c.ok()) return c.status();
    if (!f.states.empty() &&
        std::find(f.states.begin(), f.states.end(), c->state()) == f.states.end()) {
      continue;
    }
    out.push_back(*std::move(c));
  }
  return out;
}

absl::StatusOr<std::vector<CancelOrder>> SqliteStore::CancelCollection(const std::string& team,
                                                                       const std::string& id,
                                                                       const std::string& reason,
                                                                       int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement c(*db_, "SELECT team FROM collections WHERE id = ?");
    c.bind(1, id);
    if (!c.executeStep() || (!team.empty() && c.getColumn(0).getString() != team)) {
      return absl::NotFoundError(absl::StrCat("collection ", id, " not found"));
    }
    SQLite::Statement mark(*db_, "UPDATE collections SET cancel_reason = ? WHERE id = ?");
    mark.bind(1, reason.empty() ? "cancelled" : reason);
    mark.bind(2, id);
    mark.exec();
    SQLite::Statement queued(*db_,
                             "UPDATE jobs SET state = ?, reason = ?, finished_ms = ? "
                             "WHERE collection_id = ? AND state = ?");
    queued.bind(1, static_cast<int>(v1::JOB_STATE_CANCELLED));
    queued.bind(2, absl::StrCat("cancelled: ", reason));
    queued.bind(3, now_ms);
    queued.bind(4, id);
    queued.bind(5, static_cast<int>(v1::JOB_STATE_QUEUED));
    queued.exec();
    std::vector<CancelOrder> orders;
    SQLite::Statement running(
        *db_,
        "SELECT id, agent_id, fencing_token FROM jobs WHERE collection_id = ? "
        "AND state IN (?, ?)");
    running.bind(1, id);
    running.bind(2, static_cast<int>(v1::JOB_STATE_LEASED));
    running.bind(3, static_cast<int>(v1::JOB_STATE_RUNNING));
    while (running.executeStep()) {
      orders.push_back({running.getColumn(1).getString(), running.getColumn(0).getInt64(),
                        running.getColumn(2).getInt64(), reason});
    }
    AddEvent(now_ms, id, 0, EventKind::kCollectionCancelled, reason);
    RefreshCollectionState(id, now_ms);
    tx.commit();
    return orders;
  } catch (...) {
    return CurrentSqliteError("cancel " + id);
  }
}

void SqliteStore::CountNewlyFinished() {
  SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement newly(
      *db_,
      "SELECT j.state, COUNT(*) FROM collections c INDEXED BY collections_uncounted CROSS JOIN "
      "jobs j INDEXED BY jobs_by_collection_state ON j.collection_id = c.id WHERE c.state IN "
      "(3, 4, 5) AND c.jobs_counted = 0 GROUP BY j.state");
  std::vector<std::pair<int, int64_t>> counted;
  while (newly.executeStep()) {
    counted.emplace_back(newly.getColumn(0).getInt(), newly.getColumn(1).getInt64());
  }
  SQLite::Statement add(*db_,
                        "INSERT INTO finished_job_counts (state, jobs) VALUES (?, ?) ON "
                        "CONFLICT (state) DO UPDATE SET jobs = jobs + excluded.jobs");
  for (const auto& [state, n] : counted) {
    add.bind(1, state);
    add.bind(2, n);
    add.exec();
    add.reset();
  }
  db_->exec(
      "UPDATE collections INDEXED BY collections_uncounted SET jobs_counted = 1 WHERE state IN "
      "(3, 4, 5) AND jobs_counted = 0");
  tx.commit();
}

absl::StatusOr<StateCounts> SqliteStore::CountByState() {
  absl::MutexLock lock(&mu_);
  try {
    StateCounts out;
    static_assert(v1::COLLECTION_STATE_SUCCEEDED == 3 && v1::COLLECTION_STATE_FAILED == 4 &&
                  v1::COLLECTION_STATE_CANCELLED == 5);
    // The jobs of the collections that finished since the last refresh (all
    // of them, once, after migration 0027) go into finished_job_counts, and
    // the collections are marked counted, in one write transaction, taken
    // only when there are some (another process may share the file). CROSS
    // JOIN keeps collections the outer loop (SQLite scanned every job
    // otherwise). This connection is the file's only writer and mu_ is held,
    // so nothing finishes between that write and the read below.
    bool uncounted = false;
    {
      SQLite::Statement any(*db_,
                            "SELECT EXISTS (SELECT 1 FROM collections INDEXED BY "
                            "collections_uncounted WHERE state IN (3, 4, 5) AND jobs_counted = 0)");
      uncounted = any.executeStep() && any.getColumn(0).getInt() != 0;
    }  // finalized before the write transaction
    if (uncounted) CountNewlyFinished();
    // The jobs of the collections not finished, by state, and the counted
    // ones.
    SQLite::Statement jobs(
        *db_,
        "SELECT state, SUM(jobs) FROM (SELECT j.state, COUNT(*) AS jobs FROM collections c "
        "INDEXED BY collections_unfinished CROSS JOIN jobs j INDEXED BY jobs_by_collection_state "
        "ON j.collection_id = c.id WHERE c.state NOT IN (3, 4, 5) GROUP BY j.state UNION ALL "
        "SELECT state, jobs FROM finished_job_counts) GROUP BY state");
    while (jobs.executeStep()) {
      out.jobs[static_cast<v1::JobState>(jobs.getColumn(0).getInt())] =
          jobs.getColumn(1).getInt64();
    }
    SQLite::Statement agents(*db_, "SELECT state, COUNT(*) FROM agents GROUP BY state");
    while (agents.executeStep()) {
      out.agents[agents.getColumn(0).getString()] = agents.getColumn(1).getInt64();
    }
    SQLite::Statement devices(*db_,
                              "SELECT a.state = 'online', d.state, EXISTS (SELECT 1 FROM jobs j "
                              "WHERE j.agent_id = d.agent_id AND j.device_id = d.device_id AND "
                              "j.state IN (2, 3)) AS leased, COUNT(*) FROM devices d JOIN agents a "
                              "ON a.id = d.agent_id GROUP BY 1, 2, 3");
    while (devices.executeStep()) {
      out.devices[DeviceStatusName(
          devices.getColumn(0).getInt() != 0, devices.getColumn(1).getInt(),
          devices.getColumn(2).getInt() != 0)] += devices.getColumn(3).getInt64();
    }
    return out;
  } catch (...) {
    return CurrentSqliteError("count by state");
  }
}

}  // namespace npuperf::server
