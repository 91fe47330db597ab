// PostgresStore: artifact metadata (the bytes are files in the artifact
// directory every replica shares: core/artifact_files.h). A team's attaches
// take its advisory lock, so the quota check and the insert cannot race
// between replicas; the sweep deletes with SKIP LOCKED.
#include <set>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/statements.h"
#include "server/core/job_rules.h"

namespace npuperf::server {
namespace {

ArtifactRecord ArtifactOf(const pqxx::row& row) {
  ArtifactRecord a;
  a.round_id = row[0].as<int64_t>();
  a.team = row[1].as<std::string>();
  a.name = row[2].as<std::string>();
  a.sha256 = row[3].as<std::string>();
  a.size_bytes = row[4].as<int64_t>();
  a.created_ms = row[5].as<int64_t>();
  return a;
}

// The round and team of a.ref, the attempt rule and the quota
// (Store::CheckArtifact); lock: take the team's advisory lock first.
absl::StatusOr<ArtifactTarget> Decide(pqxx::work& tx, const NewArtifact& a, bool lock) {
  const std::optional<LeaseFacts> lease = PgLoadLease(tx, a.ref.job_id);
  if (!lease) return LeaseRefused(AgentRefusal::kUnknownJob, a.ref);
  if (auto why = CheckArtifactLease(*lease, a.ref, a.agent_id)) return LeaseRefused(*why, a.ref);
  auto job = tx.exec_prepared("artifact_job", a.ref.job_id);
  ArtifactTarget t;
  t.round_id = job[0][0].as<int64_t>();
  t.team = job[0][1].as<std::string>();
  if (t.round_id <= 0) return LeaseRefused(AgentRefusal::kStaleLease, a.ref);  // discovery
  if (lock) tx.exec_prepared("artifact_team_lock", t.team);
  auto have = tx.exec_prepared("artifact_have", t.round_id, a.sha256);
  if (!have.empty()) {
    t.already_present = true;
    t.created_ms = have[0][0].as<int64_t>();
    return t;
  }
  const auto bytes = tx.exec_prepared("artifact_team_bytes", t.team)[0][0].as<int64_t>();
  if (auto s = CheckArtifactQuota(a, t.team, bytes); !s.ok()) return s;
  return t;
}

}  // namespace

absl::StatusOr<ArtifactTarget> PostgresStore::CheckArtifact(const NewArtifact& a) {
  return pool_->Run(absl::StrCat("check artifact of job ", a.ref.job_id),
                    [&](pqxx::work& tx) { return Decide(tx, a, false); });
}

absl::StatusOr<ArtifactTarget> PostgresStore::AttachArtifact(const NewArtifact& a) {
  return pool_->Run(absl::StrCat("attach artifact of job ", a.ref.job_id),
                    [&](pqxx::work& tx) -> absl::StatusOr<ArtifactTarget> {
                      absl::StatusOr<ArtifactTarget> t = Decide(tx, a, true);
                      if (!t.ok() || t->already_present) return t;
                      tx.exec_prepared("artifact_insert", t->round_id, t->team, a.name, a.sha256,
                                       a.size_bytes, a.now_ms);
                      t->created_ms = a.now_ms;
                      return t;
                    });
}

absl::StatusOr<std::vector<ArtifactRecord>> PostgresStore::ListArtifacts(const std::string& team,
                                                                         int64_t round_id) {
  return pool_->Run(absl::StrCat("artifacts of round ", round_id),
                    [&](pqxx::work& tx) -> absl::StatusOr<std::vector<ArtifactRecord>> {
                      std::vector<ArtifactRecord> out;
                      for (const auto& row : tx.exec_prepared("artifact_list", round_id, team)) {
                        out.push_back(ArtifactOf(row));
                      }
                      return out;
                    });
}

absl::StatusOr<bool> PostgresStore::ArtifactReferenced(const std::string& sha256) {
  return pool_->Run("artifact " + sha256, [&](pqxx::work& tx) -> absl::StatusOr<bool> {
    return !tx.exec_prepared("artifact_referenced", sha256).empty();
  });
}

absl::StatusOr<ArtifactSweep> PostgresStore::SweepArtifacts(int64_t created_before_ms,
                                                            int32_t limit,
                                                            const ArtifactSweepScope& scope) {
  return pool_->Run("sweep artifacts", [&](pqxx::work& tx) -> absl::StatusOr<ArtifactSweep> {
    ArtifactSweep out;
    std::set<std::string> digests;
    for (const auto& row : tx.exec_prepared("artifact_sweep", created_before_ms, limit, scope.team,
                                            JsonStringArray(scope.except))) {
      out.deleted.push_back(ArtifactOf(row));
      digests.insert(out.deleted.back().sha256);
    }
    for (const std::string& sha : digests) {
      if (tx.exec_prepared("artifact_referenced", sha).empty()) out.unreferenced.push_back(sha);
    }
    return out;
  });
}

}  // namespace npuperf::server
