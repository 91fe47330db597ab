// SqliteStore: artifact metadata (the bytes are files in the artifact
// directory: core/artifact_files.h). One connection and BEGIN IMMEDIATE
// serialize the quota check with the insert.
#include <set>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/job_rules.h"

namespace npuperf::server {
namespace {

ArtifactRecord ReadArtifact(SQLite::Statement& q) {
  ArtifactRecord a;
  a.round_id = q.getColumn(0).getInt64();
  a.team = q.getColumn(1).getString();
  a.name = q.getColumn(2).getString();
  a.sha256 = q.getColumn(3).getString();
  a.size_bytes = q.getColumn(4).getInt64();
  a.created_ms = q.getColumn(5).getInt64();
  return a;
}

}  // namespace

absl::StatusOr<ArtifactTarget> SqliteStore::DecideArtifact(const NewArtifact& a) {
  const std::optional<LeaseFacts> lease = LoadLease(a.ref.job_id);
  if (!lease) return LeaseRefused(AgentRefusal::kUnknownJob, a.ref);
  if (auto why = CheckArtifactLease(*lease, a.ref, a.agent_id)) return LeaseRefused(*why, a.ref);
  SQLite::Statement job(*db_, "SELECT COALESCE(round_id, 0), team FROM jobs WHERE id = ?");
  job.bind(1, a.ref.job_id);
  job.executeStep();
  ArtifactTarget t;
  t.round_id = job.getColumn(0).getInt64();
  t.team = job.getColumn(1).getString();
  if (t.round_id <= 0) return LeaseRefused(AgentRefusal::kStaleLease, a.ref);  // discovery
  SQLite::Statement have(*db_,
                         "SELECT created_ms FROM artifacts WHERE round_id = ? AND sha256 = ?");
  have.bind(1, t.round_id);
  have.bind(2, a.sha256);
  if (have.executeStep()) {
    t.already_present = true;
    t.created_ms = have.getColumn(0).getInt64();
    return t;
  }
  SQLite::Statement used(*db_, "SELECT COALESCE(SUM(size_bytes), 0) FROM artifacts WHERE team = ?");
  used.bind(1, t.team);
  used.executeStep();
  const int64_t bytes = used.getColumn(0).getInt64();
  if (auto s = CheckArtifactQuota(a, t.team, bytes); !s.ok()) return s;
  return t;
}

absl::StatusOr<ArtifactTarget> SqliteStore::CheckArtifact(const NewArtifact& a) {
  absl::MutexLock lock(&mu_);
  try {
    return DecideArtifact(a);
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("check artifact of job ", a.ref.job_id));
  }
}

absl::StatusOr<ArtifactTarget> SqliteStore::AttachArtifact(const NewArtifact& a) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    absl::StatusOr<ArtifactTarget> t = DecideArtifact(a);
    if (!t.ok() || t->already_present) return t;
    SQLite::Statement ins(*db_,
                          "INSERT INTO artifacts (round_id, team, name, sha256, size_bytes, "
                          "created_ms) VALUES (?, ?, ?, ?, ?, ?)");
    ins.bind(1, t->round_id);
    ins.bind(2, t->team);
    ins.bind(3, a.name);
    ins.bind(4, a.sha256);
    ins.bind(5, a.size_bytes);
    ins.bind(6, a.now_ms);
    ins.exec();
    tx.commit();
    t->created_ms = a.now_ms;
    return t;
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("attach artifact of job ", a.ref.job_id));
  }
}

absl::StatusOr<std::vector<ArtifactRecord>> SqliteStore::ListArtifacts(const std::string& team,
                                                                       int64_t round_id) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_,
                        "SELECT round_id, team, name, sha256, size_bytes, created_ms FROM "
                        "artifacts WHERE round_id = ? AND (? = '' OR team = ?) "
                        "ORDER BY created_ms, sha256");
    q.bind(1, round_id);
    q.bind(2, team);
    q.bind(3, team);
    std::vector<ArtifactRecord> out;
    while (q.executeStep()) out.push_back(ReadArtifact(q));
    return out;
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("artifacts of round ", round_id));
  }
}

absl::StatusOr<bool> SqliteStore::ArtifactReferenced(const std::string& sha256) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, "SELECT 1 FROM artifacts WHERE sha256 = ? LIMIT 1");
    q.bind(1, sha256);
    return q.executeStep();
  } catch (...) {
    return CurrentSqliteError("artifact " + sha256);
  }
}

absl::StatusOr<ArtifactSweep> SqliteStore::SweepArtifacts(int64_t created_before_ms, int32_t limit,
                                                          const ArtifactSweepScope& scope) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement q(*db_,
                        "SELECT a.round_id, a.team, a.name, a.sha256, a.size_bytes, a.created_ms "
                        "FROM artifacts a JOIN rounds r ON r.id = a.round_id "
                        "WHERE a.created_ms < ? AND NOT EXISTS (SELECT 1 FROM baselines b "
                        "WHERE b.team = a.team AND (b.round_id = a.round_id OR "
                        "b.collection_id = r.collection_id)) "
                        "AND (? = '' OR a.team = ?) "
                        "AND a.team NOT IN (SELECT value FROM json_each(?)) "
                        "ORDER BY a.created_ms, a.round_id LIMIT ?");
    q.bind(1, created_before_ms);
    q.bind(2, scope.team);
    q.bind(3, scope.team);
    q.bind(4, JsonStringArray(scope.except));
    q.bind(5, limit);
    ArtifactSweep out;
    while (q.executeStep()) out.deleted.push_back(ReadArtifact(q));
    SQLite::Statement del(*db_, "DELETE FROM artifacts WHERE round_id = ? AND sha256 = ?");
    std::set<std::string> digests;
    for (const ArtifactRecord& a : out.deleted) {
      del.bind(1, a.round_id);
      del.bind(2, a.sha256);
      del.exec();
      del.reset();
      digests.insert(a.sha256);
    }
    SQLite::Statement ref(*db_, "SELECT 1 FROM artifacts WHERE sha256 = ? LIMIT 1");
    for (const std::string& sha : digests) {
      ref.bind(1, sha);
      if (!ref.executeStep()) out.unreferenced.push_back(sha);
      ref.reset();
    }
    tx.commit();
    return out;
  } catch (...) {
    return CurrentSqliteError("sweep artifacts");
  }
}

}  // namespace npuperf::server
