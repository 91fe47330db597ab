// SqliteStore: bundles (content in chunks, ownership per team, quota,
// the collector). One connection and BEGIN IMMEDIATE serialize every step,
// so ownership checks and deletions cannot race.
#include <set>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/rows.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/job_rules.h"

namespace npuperf::server {
namespace {

// Marks (team, sha256) used at now_ms; false when the team does not own it.
bool TouchOwner(SQLite::Database& db, const std::string& team, const std::string& sha256,
                int64_t now_ms) {
  SQLite::Statement q(db, "UPDATE bundle_owners SET used_ms = ? WHERE team = ? AND sha256 = ?");
  q.bind(1, now_ms);
  q.bind(2, team);
  q.bind(3, sha256);
  return q.exec() > 0;
}

int64_t TeamBytes(SQLite::Database& db, const std::string& team) {
  SQLite::Statement q(db,
                      "SELECT COALESCE(SUM(b.size_bytes), 0) FROM bundle_owners o JOIN bundles b "
                      "ON b.sha256 = o.sha256 WHERE o.team = ?");
  q.bind(1, team);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

// Inserts the bundle's row and its chunks unless the content is stored
// already (another team's upload).
absl::Status InsertContent(SQLite::Database& db, const NewBundle& b) {
  SQLite::Statement ins(db,
                        "INSERT INTO bundles (sha256, team, name, size_bytes, created_ms) VALUES "
                        "(?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING");
  ins.bind(1, b.sha256);
  ins.bind(2, b.team);
  ins.bind(3, b.name);
  ins.bind(4, b.size_bytes);
  ins.bind(5, b.now_ms);
  if (ins.exec() == 0) return absl::OkStatus();
  SQLite::Statement chunk(db, "INSERT INTO bundle_chunks (sha256, seq, data) VALUES (?, ?, ?)");
  int seq = 0;
  for (int64_t offset = 0; offset < b.size_bytes; ++seq) {
    auto data = b.read(offset, kStoredChunkBytes);
    if (!data.ok()) return data.status();
    if (data->empty()) return absl::DataLossError("bundle content ended early");
    chunk.bind(1, b.sha256);
    chunk.bind(2, seq);
    chunk.bind(3, data->data(), static_cast<int>(data->size()));
    chunk.exec();
    chunk.reset();
    offset += static_cast<int64_t>(data->size());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> SqliteStore::StoreBundle(const NewBundle& b) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    if (TouchOwner(*db_, b.team, b.sha256, b.now_ms)) {
      tx.commit();
      return true;
    }
    const int64_t used = TeamBytes(*db_, b.team);
    if (b.quota_bytes > 0 && used + b.size_bytes > b.quota_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("team ", b.team, " stores ", used, " bytes of bundles; this one (",
                       b.size_bytes, " bytes) would pass its quota of ", b.quota_bytes, " bytes"));
    }
    if (auto s = InsertContent(*db_, b); !s.ok()) return s;
    SQLite::Statement own(
        *db_, "INSERT INTO bundle_owners (team, sha256, name, used_ms) VALUES (?, ?, ?, ?)");
    own.bind(1, b.team);
    own.bind(2, b.sha256);
    own.bind(3, b.name);
    own.bind(4, b.now_ms);
    own.exec();
    tx.commit();
    return false;
  } catch (...) {
    return CurrentSqliteError("store bundle " + b.sha256);
  }
}

absl::StatusOr<bool> SqliteStore::UseBundle(const std::string& team, const std::string& sha256,
                                            int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    return TouchOwner(*db_, team, sha256, now_ms);
  } catch (...) {
    return CurrentSqliteError("use bundle " + sha256);
  }
}

absl::StatusOr<int64_t> SqliteStore::BundleBytes(const std::string& team) {
  absl::MutexLock lock(&mu_);
  try {
    return TeamBytes(*db_, team);
  } catch (...) {
    return CurrentSqliteError("bundle bytes of " + team);
  }
}

absl::StatusOr<JobBundle> SqliteStore::GetJobBundle(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_,
                        "SELECT j.state, COALESCE(j.agent_id, ''), j.operator_name, c.team, c.spec "
                        "FROM jobs j JOIN collections c ON c.id = j.collection_id WHERE j.id = ?");
    q.bind(1, job_id);
    if (!q.executeStep()) return absl::NotFoundError(absl::StrCat("job ", job_id, " not found"));
    JobBundle out;
    out.state = static_cast<v1::JobState>(q.getColumn(0).getInt());
    out.agent_id = q.getColumn(1).getString();
    out.team = q.getColumn(3).getString();
    v1::CollectionSpec spec;
    spec.ParseFromString(BlobOf(q.getColumn(4)));
    out.bundle_sha256 = BundleOfOperator(spec, q.getColumn(2).getString());
    out.spec = std::move(spec);
    SQLite::Statement b(*db_,
                        "SELECT b.size_bytes, (SELECT COUNT(*) FROM bundle_chunks k WHERE k.sha256 "
                        "= b.sha256) FROM bundles b JOIN bundle_owners o ON o.sha256 = b.sha256 "
                        "WHERE b.sha256 = ? AND o.team = ?");
    b.bind(1, out.bundle_sha256);
    b.bind(2, out.team);
    if (b.executeStep()) {
      out.stored = true;
      out.size_bytes = b.getColumn(0).getInt64();
      out.chunks = b.getColumn(1).getInt();
    }
    return out;
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("bundle of job ", job_id));
  }
}

absl::StatusOr<std::string> SqliteStore::GetBundleChunk(const std::string& sha256, int32_t index) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, "SELECT data FROM bundle_chunks WHERE sha256 = ? AND seq = ?");
    q.bind(1, sha256);
    q.bind(2, index);
    if (!q.executeStep()) {
      return absl::NotFoundError(absl::StrCat("bundle ", sha256, " chunk ", index, " not found"));
    }
    return BlobOf(q.getColumn(0));
  } catch (...) {
    return CurrentSqliteError("get bundle " + sha256);
  }
}

std::set<std::pair<std::string, std::string>> SqliteStore::BundlesInUse() {
  std::set<std::pair<std::string, std::string>> keep;
  SQLite::Statement q(
      *db_,
      "SELECT team, spec FROM collections WHERE state IN (1, 2) OR id IN (SELECT "
      "collection_id FROM baselines WHERE collection_id IS NOT NULL) OR id IN "
      "(SELECT r.collection_id FROM baselines b JOIN rounds r ON r.id = b.round_id)");
  while (q.executeStep()) {
    v1::CollectionSpec spec;
    spec.ParseFromString(BlobOf(q.getColumn(1)));
    AddSpecBundles(q.getColumn(0).getString(), spec, &keep);
  }
  return keep;
}

absl::StatusOr<BundleCollection> SqliteStore::CollectBundles(int64_t unused_before_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    BundleCollection out;
    std::vector<std::pair<std::string, std::string>> stale;
    SQLite::Statement q(*db_, "SELECT team, sha256 FROM bundle_owners WHERE used_ms < ?");
    q.bind(1, unused_before_ms);
    while (q.executeStep())
      stale.emplace_back(q.getColumn(0).getString(), q.getColumn(1).getString());
    if (stale.empty()) return out;
    const auto keep = BundlesInUse();
    SQLite::Statement drop(*db_, "DELETE FROM bundle_owners WHERE team = ? AND sha256 = ?");
    for (const auto& owner : stale) {
      if (keep.contains(owner)) continue;
      drop.bind(1, owner.first);
      drop.bind(2, owner.second);
      out.owners_dropped += drop.exec();
      drop.reset();
    }
    SQLite::Statement freed(*db_,
                            "SELECT COUNT(*), COALESCE(SUM(size_bytes), 0) FROM bundles b WHERE "
                            "NOT EXISTS (SELECT 1 FROM bundle_owners o WHERE o.sha256 = b.sha256)");
    freed.executeStep();
    out.bundles_deleted = freed.getColumn(0).getInt64();
    out.bytes_freed = freed.getColumn(1).getInt64();
    db_->exec(
        "DELETE FROM bundles WHERE NOT EXISTS (SELECT 1 FROM bundle_owners o WHERE o.sha256 = "
        "bundles.sha256)");
    tx.commit();
    return out;
  } catch (...) {
    return CurrentSqliteError("collect bundles");
  }
}

}  // namespace npuperf::server
