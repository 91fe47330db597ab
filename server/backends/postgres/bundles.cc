// PostgresStore: bundles (content in chunks, ownership per team, quota, the
// collector). Row locks order every step that could race between replicas:
// a team's uploads take its advisory lock; an upload and the collector both
// lock the bundle's row before they add or delete anything under it.
#include <set>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/rows.h"
#include "server/core/job_rules.h"

namespace npuperf::server {
namespace {

// Inserts the chunks of a content new to the database.
absl::Status InsertChunks(pqxx::work& tx, const NewBundle& b) {
  int seq = 0;
  for (int64_t offset = 0; offset < b.size_bytes; ++seq) {
    auto data = b.read(offset, kStoredChunkBytes);
    if (!data.ok()) return data.status();
    if (data->empty()) return absl::DataLossError("bundle content ended early");
    tx.exec_prepared("bundle_chunk_insert", b.sha256, seq, PgBytes(*data));
    offset += static_cast<int64_t>(data->size());
  }
  return absl::OkStatus();
}

// Deletes the content when nobody owns it any more; its size, or 0.
int64_t DeleteUnowned(pqxx::work& tx, const std::string& sha256) {
  auto locked = tx.exec_prepared("bundle_gc_lock", sha256);
  if (locked.empty() || !tx.exec_prepared("bundle_gc_owned", sha256).empty()) return 0;
  tx.exec_prepared("bundle_gc_delete", sha256);
  return locked[0][0].as<int64_t>();
}

}  // namespace

absl::StatusOr<bool> PostgresStore::StoreBundle(const NewBundle& b) {
  return pool_->Run("store bundle " + b.sha256, [&](pqxx::work& tx) -> absl::StatusOr<bool> {
    tx.exec_prepared("bundle_team_lock", b.team);
    if (tx.exec_prepared("bundle_touch", b.team, b.sha256, b.now_ms).affected_rows() > 0) {
      return true;
    }
    const auto used = tx.exec_prepared("bundle_team_bytes", b.team)[0][0].as<int64_t>();
    if (b.quota_bytes > 0 && used + b.size_bytes > b.quota_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("team ", b.team, " stores ", used, " bytes of bundles; this one (",
                       b.size_bytes, " bytes) would pass its quota of ", b.quota_bytes, " bytes"));
    }
    auto row = tx.exec_prepared("bundle_upsert", b.sha256, b.team, b.name, b.size_bytes, b.now_ms);
    if (row[0][0].as<bool>()) {
      if (auto s = InsertChunks(tx, b); !s.ok()) return s;
    }
    tx.exec_prepared("bundle_owner_insert", b.team, b.sha256, b.name, b.now_ms);
    return false;
  });
}

absl::StatusOr<bool> PostgresStore::UseBundle(const std::string& team, const std::string& sha256,
                                              int64_t now_ms) {
  return pool_->Run("use bundle " + sha256, [&](pqxx::work& tx) -> absl::StatusOr<bool> {
    return tx.exec_prepared("bundle_touch", team, sha256, now_ms).affected_rows() > 0;
  });
}

absl::StatusOr<int64_t> PostgresStore::BundleBytes(const std::string& team) {
  return pool_->Run("bundle bytes of " + team, [&](pqxx::work& tx) -> absl::StatusOr<int64_t> {
    return tx.exec_prepared("bundle_team_bytes", team)[0][0].as<int64_t>();
  });
}

absl::StatusOr<JobBundle> PostgresStore::GetJobBundle(int64_t job_id) {
  return pool_->Run(absl::StrCat("bundle of job ", job_id),
                    [&](pqxx::work& tx) -> absl::StatusOr<JobBundle> {
                      auto r = tx.exec_prepared("bundle_of_job", job_id);
                      if (r.empty()) {
                        return absl::NotFoundError(absl::StrCat("job ", job_id, " not found"));
                      }
                      JobBundle out;
                      out.state = static_cast<v1::JobState>(r[0][0].as<int>());
                      out.agent_id = r[0][1].as<std::string>();
                      out.team = r[0][3].as<std::string>();
                      v1::CollectionSpec spec;
                      spec.ParseFromString(PgBlob(r[0][4]));
                      out.bundle_sha256 = BundleOfOperator(spec, r[0][2].as<std::string>());
                      out.spec = std::move(spec);
                      auto b = tx.exec_prepared("bundle_owned_info", out.bundle_sha256, out.team);
                      if (!b.empty()) {
                        out.stored = true;
                        out.size_bytes = b[0][0].as<int64_t>();
                        out.chunks = b[0][1].as<int32_t>();
                      }
                      return out;
                    });
}

absl::StatusOr<std::string> PostgresStore::GetBundleChunk(const std::string& sha256,
                                                          int32_t index) {
  return pool_->Run("get bundle " + sha256, [&](pqxx::work& tx) -> absl::StatusOr<std::string> {
    auto r = tx.exec_prepared("bundle_chunk_get", sha256, index);
    if (r.empty()) {
      return absl::NotFoundError(absl::StrCat("bundle ", sha256, " chunk ", index, " not found"));
    }
    return PgBlob(r[0][0]);
  });
}

absl::StatusOr<BundleCollection> PostgresStore::CollectBundles(int64_t unused_before_ms) {
  return pool_->Run("collect bundles", [&](pqxx::work& tx) -> absl::StatusOr<BundleCollection> {
    BundleCollection out;
    auto stale = tx.exec_prepared("bundle_gc_stale", unused_before_ms);
    if (stale.empty()) return out;
    std::set<std::pair<std::string, std::string>> keep;
    for (const auto& row : tx.exec_prepared("bundle_gc_in_use")) {
      v1::CollectionSpec spec;
      spec.ParseFromString(PgBlob(row[1]));
      AddSpecBundles(row[0].as<std::string>(), spec, &keep);
    }
    std::set<std::string> dropped;
    for (const auto& row : stale) {
      std::pair<std::string, std::string> owner(row[0].as<std::string>(), row[1].as<std::string>());
      if (keep.contains(owner)) continue;
      auto d = tx.exec_prepared("bundle_gc_drop", owner.first, owner.second, unused_before_ms);
      if (d.affected_rows() == 0) continue;
      ++out.owners_dropped;
      dropped.insert(owner.second);
    }
    for (const auto& sha : dropped) {
      if (const int64_t bytes = DeleteUnowned(tx, sha); bytes > 0) {
        ++out.bundles_deleted;
        out.bytes_freed += bytes;
      }
    }
    return out;
  });
}

}  // namespace npuperf::server
