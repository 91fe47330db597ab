// PostgresStore: bisections (migration 0019; compare/bisections.h drives
// them). The insert relies on the unique index (one per team and key)
// through ON CONFLICT, so two replicas starting one with the same key at once
// create one and both return it; the update is a compare-and-set on version.
#include <utility>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/rows.h"
#include "server/backends/postgres/statements.h"

namespace npuperf::server {
namespace {

// A row of NPUPERF_PG_BISECTION_COLUMNS.
BisectionRecord BisectionOf(const pqxx::row& row) {
  BisectionRecord b;
  b.team = row[1].as<std::string>();
  b.idempotency_key = row[2].as<std::string>();
  b.bisection.ParseFromString(PgBlob(row[3]));
  b.bisection.set_id(row[0].as<int64_t>());
  b.version = row[4].as<int64_t>();
  return b;
}

absl::Status NotFound(int64_t id) {
  return absl::NotFoundError(absl::StrCat("bisection ", id, " not found"));
}

}  // namespace

absl::StatusOr<std::pair<BisectionRecord, bool>> PostgresStore::InsertBisection(
    const BisectionRecord& b, int64_t now_ms) {
  return pool_->Run(
      "insert bisection", [&](pqxx::work& tx) -> absl::StatusOr<std::pair<BisectionRecord, bool>> {
        BisectionRecord out = b;
        out.version = 1;
        out.bisection.clear_id();
        auto id = tx.exec_prepared(
            "bisection_insert", b.team, b.idempotency_key, static_cast<int>(b.bisection.state()),
            b.bisection.regression_id(), PgBytes(out.bisection.SerializeAsString()), now_ms);
        if (!id.empty()) {
          out.bisection.set_id(id[0][0].as<int64_t>());
          return std::pair{std::move(out), true};
        }
        // The key's row exists: committed before the insert, or by a
        // concurrent insert the conflict waited for (read committed: this
        // statement sees it).
        auto have = tx.exec_prepared("bisection_of_key", b.team, b.idempotency_key);
        if (have.empty()) {  // rows are never deleted; cannot happen
          return absl::AbortedError("bisection of the key changed during the insert");
        }
        return std::pair{BisectionOf(have[0]), false};
      });
}

absl::StatusOr<BisectionRecord> PostgresStore::GetBisection(const std::string& team, int64_t id) {
  return pool_->Run("get bisection", [&](pqxx::work& tx) -> absl::StatusOr<BisectionRecord> {
    auto r = tx.exec_prepared("bisection_get", id, team);
    if (r.empty()) return NotFound(id);
    return BisectionOf(r[0]);
  });
}

absl::StatusOr<std::vector<BisectionRecord>> PostgresStore::ListBisections(const std::string& team,
                                                                           bool include_finished,
                                                                           int32_t limit) {
  if (limit <= 0) return std::vector<BisectionRecord>{};  // PostgreSQL rejects a negative LIMIT
  return pool_->Run(
      "list bisections", [&](pqxx::work& tx) -> absl::StatusOr<std::vector<BisectionRecord>> {
        std::vector<BisectionRecord> out;
        for (const auto& row :
             tx.exec_prepared(include_finished ? "bisection_list_all" : "bisection_list_unfinished",
                              team, limit)) {
          out.push_back(BisectionOf(row));
        }
        return out;
      });
}

absl::StatusOr<BisectionRecord> PostgresStore::UpdateBisection(const BisectionRecord& b,
                                                               int64_t now_ms) {
  return pool_->Run("update bisection", [&](pqxx::work& tx) -> absl::StatusOr<BisectionRecord> {
    const int64_t id = b.bisection.id();
    auto r = tx.exec_prepared("bisection_update", static_cast<int>(b.bisection.state()),
                              b.bisection.regression_id(), PgBytes(b.bisection.SerializeAsString()),
                              now_ms, id, b.team, b.version);
    if (r.empty()) {
      auto v = tx.exec_prepared("bisection_version", id, b.team);
      if (v.empty()) return NotFound(id);
      return absl::FailedPreconditionError(absl::StrCat("bisection ", id, " changed since version ",
                                                        b.version, " (now ", v[0][0].as<int64_t>(),
                                                        ")"));
    }
    BisectionRecord out = b;
    out.version = r[0][0].as<int64_t>();
    out.idempotency_key = r[0][1].as<std::string>();
    return out;
  });
}

}  // namespace npuperf::server
