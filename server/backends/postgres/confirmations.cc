// PostgresStore: confirmations (migration 0015; compare/confirmations.h
// drives them). The insert relies on the partial unique index (one per pair
// of rounds that is not UNCONFIRMED) through ON CONFLICT, so two replicas
// asking at once create one; the update is a compare-and-set on version.
#include <utility>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/rows.h"
#include "server/backends/postgres/statements.h"

namespace npuperf::server {
namespace {

// A row of NPUPERF_PG_CONFIRMATION_COLUMNS.
ConfirmationRecord ConfirmationOf(const pqxx::row& row) {
  ConfirmationRecord c;
  c.team = row[1].as<std::string>();
  c.options.ParseFromString(PgBlob(row[2]));
  c.confirmation.ParseFromString(PgBlob(row[3]));
  c.confirmation.set_id(row[0].as<int64_t>());
  c.version = row[4].as<int64_t>();
  return c;
}

absl::Status NotFound(int64_t id) {
  return absl::NotFoundError(absl::StrCat("confirmation ", id, " not found"));
}

}  // namespace

absl::StatusOr<std::pair<ConfirmationRecord, bool>> PostgresStore::InsertConfirmation(
    const ConfirmationRecord& c, int64_t now_ms) {
  return pool_->Run(
      "insert confirmation",
      [&](pqxx::work& tx) -> absl::StatusOr<std::pair<ConfirmationRecord, bool>> {
        const v1::Confirmation& body = c.confirmation;
        ConfirmationRecord out = c;
        out.version = 1;
        out.confirmation.clear_id();
        auto id = tx.exec_prepared("confirmation_insert", c.team, body.baseline_round_id(),
                                   body.candidate_round_id(), static_cast<int>(body.state()),
                                   PgBytes(c.options.SerializeAsString()),
                                   PgBytes(out.confirmation.SerializeAsString()), now_ms);
        if (!id.empty()) {
          out.confirmation.set_id(id[0][0].as<int64_t>());
          return std::pair{std::move(out), true};
        }
        auto have = tx.exec_prepared("confirmation_of_pair", c.team, body.baseline_round_id(),
                                     body.candidate_round_id());
        if (have.empty()) {  // the other one became UNCONFIRMED in between
          return absl::AbortedError("confirmation of the pair changed during the insert");
        }
        return std::pair{ConfirmationOf(have[0]), false};
      });
}

absl::StatusOr<ConfirmationRecord> PostgresStore::GetConfirmation(const std::string& team,
                                                                  int64_t id) {
  return pool_->Run("get confirmation", [&](pqxx::work& tx) -> absl::StatusOr<ConfirmationRecord> {
    auto r = tx.exec_prepared("confirmation_get", id, team);
    if (r.empty()) return NotFound(id);
    return ConfirmationOf(r[0]);
  });
}

absl::StatusOr<std::vector<ConfirmationRecord>> PostgresStore::ListPendingConfirmations(
    int32_t limit) {
  return pool_->Run("list pending confirmations",
                    [&](pqxx::work& tx) -> absl::StatusOr<std::vector<ConfirmationRecord>> {
                      std::vector<ConfirmationRecord> out;
                      for (const auto& row : tx.exec_prepared("confirmation_pending", limit)) {
                        out.push_back(ConfirmationOf(row));
                      }
                      return out;
                    });
}

absl::StatusOr<ConfirmationRecord> PostgresStore::UpdateConfirmation(const ConfirmationRecord& c,
                                                                     int64_t now_ms) {
  return pool_->Run(
      "update confirmation", [&](pqxx::work& tx) -> absl::StatusOr<ConfirmationRecord> {
        const int64_t id = c.confirmation.id();
        auto r = tx.exec_prepared("confirmation_update", static_cast<int>(c.confirmation.state()),
                                  PgBytes(c.confirmation.SerializeAsString()), now_ms, id, c.team,
                                  c.version);
        if (r.empty()) {
          auto v = tx.exec_prepared("confirmation_version", id, c.team);
          if (v.empty()) return NotFound(id);
          return absl::FailedPreconditionError(absl::StrCat("confirmation ", id,
                                                            " changed since version ", c.version,
                                                            " (now ", v[0][0].as<int64_t>(), ")"));
        }
        ConfirmationRecord out = c;
        out.version = r[0][0].as<int64_t>();
        return out;
      });
}

}  // namespace npuperf::server
