// PostgresStore: device canaries (migration 0020; compare/canaries.h drives
// them). The insert relies on the unique index (one per host, device and
// slot) through ON CONFLICT, so two replicas scheduling one device's tick at
// once create one canary and both return it; the update is a compare-and-set
// on version.
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "common/status_util.h"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/statements.h"

namespace npuperf::server {
namespace {

constexpr int32_t kMaxListed = 1000;  // Store::ListCanaries

// A row of NPUPERF_PG_CANARY_COLUMNS.
CanaryRecord CanaryOf(const pqxx::row& row) {
  CanaryRecord c;
  c.id = row[0].as<int64_t>();
  c.host = row[1].as<std::string>();
  c.device_id = row[2].as<int32_t>();
  c.soc = row[3].as<std::string>();
  c.slot = row[4].as<int64_t>();
  c.state = row[5].as<std::string>();
  c.collection_id = row[6].as<std::string>();
  c.round_id = row[7].as<int64_t>();
  c.kernel_us = row[8].as<double>();
  c.reference = row[9].as<std::string>();
  c.reference_us = row[10].as<double>();
  c.excess_pct = row[11].as<double>();
  c.threshold_pct = row[12].as<double>();
  c.reason = row[13].as<std::string>();
  c.created_ms = row[14].as<int64_t>();
  c.finished_ms = row[15].as<int64_t>();
  c.version = row[16].as<int64_t>();
  return c;
}

}  // namespace

absl::StatusOr<std::pair<CanaryRecord, bool>> PostgresStore::InsertCanary(const CanaryRecord& c) {
  return pool_->Run(absl::StrCat("insert canary ", c.host, ":", c.device_id),
                    [&](pqxx::work& tx) -> absl::StatusOr<std::pair<CanaryRecord, bool>> {
                      auto id = tx.exec_prepared(
                          "canary_insert", c.host, c.device_id, c.soc, c.slot, c.state,
                          c.collection_id, c.round_id, c.kernel_us, c.reference, c.reference_us,
                          c.excess_pct, c.threshold_pct, c.reason, c.created_ms, c.finished_ms);
                      if (!id.empty()) {
                        CanaryRecord out = c;
                        out.id = id[0][0].as<int64_t>();
                        out.version = 1;
                        return std::pair{std::move(out), true};
                      }
                      // The slot's row exists: committed before the insert, or by a
                      // concurrent insert the conflict waited for (read committed: this
                      // statement sees it).
                      auto have = tx.exec_prepared("canary_of_slot", c.host, c.device_id, c.slot);
                      if (have.empty()) {  // rows are never deleted; cannot happen
                        return absl::AbortedError("canary of the slot changed during the insert");
                      }
                      return std::pair{CanaryOf(have[0]), false};
                    });
}

absl::StatusOr<CanaryRecord> PostgresStore::UpdateCanary(const CanaryRecord& c) {
  return pool_->Run(
      absl::StrCat("update canary ", c.id), [&](pqxx::work& tx) -> absl::StatusOr<CanaryRecord> {
        auto r = tx.exec_prepared("canary_update", c.host, c.device_id, c.soc, c.slot, c.state,
                                  c.collection_id, c.round_id, c.kernel_us, c.reference,
                                  c.reference_us, c.excess_pct, c.threshold_pct, c.reason,
                                  c.created_ms, c.finished_ms, c.id, c.version);
        if (r.empty()) {
          auto v = tx.exec_prepared("canary_version", c.id);
          if (v.empty()) return absl::NotFoundError(absl::StrCat("canary ", c.id, " not found"));
          return absl::FailedPreconditionError(absl::StrCat("canary ", c.id,
                                                            " changed since version ", c.version,
                                                            " (now ", v[0][0].as<int64_t>(), ")"));
        }
        CanaryRecord out = c;
        out.version = r[0][0].as<int64_t>();
        return out;
      });
}

absl::StatusOr<std::vector<CanaryRecord>> PostgresStore::ListCanaries(const CanaryFilter& f) {
  if (f.limit < 1 || f.limit > kMaxListed) {
    return InvalidArgumentWithFields({{"limit", absl::StrCat("must be 1..", kMaxListed)}});
  }
  if (f.pending_only && f.finished_only) return std::vector<CanaryRecord>{};  // none is both
  const char* statement = f.pending_only    ? "canary_list_pending"
                          : f.finished_only ? "canary_list_finished"
                                            : "canary_list_any";
  return pool_->Run(
      "list canaries", [&](pqxx::work& tx) -> absl::StatusOr<std::vector<CanaryRecord>> {
        std::vector<CanaryRecord> out;
        for (const auto& row :
             tx.exec_prepared(statement, f.host, f.device_id, f.soc, f.before_id, f.limit)) {
          out.push_back(CanaryOf(row));
        }
        return out;
      });
}

}  // namespace npuperf::server
