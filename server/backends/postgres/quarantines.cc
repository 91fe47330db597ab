// PostgresStore: device quarantine (migration 0017; core/device_health.h
// drives it; 0020 adds the suspect rounds of a canary quarantine). The
// partial unique index on the current row makes a quarantine insert-once
// across replicas; a release is one conditional UPDATE, so two people
// releasing at once release it once.
#include <optional>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/statements.h"

namespace npuperf::server {
namespace {

// A row of NPUPERF_PG_QUARANTINE_COLUMNS.
QuarantineRecord QuarantineOf(const pqxx::row& row) {
  QuarantineRecord r;
  r.id = row[0].as<int64_t>();
  r.host = row[1].as<std::string>();
  r.device_id = row[2].as<int32_t>();
  r.soc = row[3].as<std::string>();
  r.reason = row[4].as<std::string>();
  r.source = row[5].as<std::string>();
  r.since_ms = row[6].as<int64_t>();
  r.released_ms = row[7].as<int64_t>();
  r.released_by = row[8].as<std::string>();
  r.release_note = row[9].as<std::string>();
  r.suspect_since_ms = row[10].as<int64_t>();
  return r;
}

}  // namespace

absl::StatusOr<std::pair<QuarantineRecord, bool>> PostgresStore::QuarantineDevice(
    const QuarantineRecord& q) {
  return pool_->Run(absl::StrCat("quarantine ", q.host, ":", q.device_id),
                    [&](pqxx::work& tx) -> absl::StatusOr<std::pair<QuarantineRecord, bool>> {
                      const pqxx::result ins =
                          tx.exec_prepared("quarantine_insert", q.host, q.device_id, q.soc,
                                           q.reason, q.source, q.since_ms, q.suspect_since_ms);
                      if (!ins.empty()) {
                        QuarantineRecord out = q;
                        out.id = ins[0][0].as<int64_t>();
                        out.released_ms = 0;
                        out.released_by.clear();
                        out.release_note.clear();
                        return std::make_pair(out, true);
                      }
                      const pqxx::result cur =
                          tx.exec_prepared("quarantine_current", q.host, q.device_id);
                      if (cur.empty()) {
                        // Released between the two statements: the caller may try again.
                        return absl::AbortedError(absl::StrCat("device ", q.host, ":", q.device_id,
                                                               " was released meanwhile"));
                      }
                      return std::make_pair(QuarantineOf(cur[0]), false);
                    });
}

absl::StatusOr<QuarantineRecord> PostgresStore::ReleaseDevice(const std::string& host,
                                                              int32_t device_id,
                                                              const std::string& actor,
                                                              const std::string& note,
                                                              int64_t now_ms) {
  return pool_->Run(absl::StrCat("release ", host, ":", device_id),
                    [&](pqxx::work& tx) -> absl::StatusOr<QuarantineRecord> {
                      const pqxx::result r = tx.exec_prepared("quarantine_release", host, device_id,
                                                              now_ms, actor, note);
                      if (r.empty()) {
                        return absl::FailedPreconditionError(
                            absl::StrCat("device ", host, ":", device_id, " is not quarantined"));
                      }
                      return QuarantineOf(r[0]);
                    });
}

absl::StatusOr<std::vector<QuarantineRecord>> PostgresStore::ListQuarantines(bool include_released,
                                                                             int32_t limit) {
  return pool_->Run(
      "list quarantines", [&](pqxx::work& tx) -> absl::StatusOr<std::vector<QuarantineRecord>> {
        std::vector<QuarantineRecord> out;
        for (const auto& row : tx.exec_prepared("quarantine_list", include_released, limit)) {
          out.push_back(QuarantineOf(row));
        }
        return out;
      });
}

absl::StatusOr<std::vector<QuarantineRecord>> PostgresStore::CanaryQuarantinesOf(
    const std::string& host, int32_t device_id) {
  return pool_->Run(
      absl::StrCat("canary quarantines of ", host, ":", device_id),
      [&](pqxx::work& tx) -> absl::StatusOr<std::vector<QuarantineRecord>> {
        std::vector<QuarantineRecord> out;
        for (const auto& row : tx.exec_prepared("quarantine_canary_of", host, device_id)) {
          out.push_back(QuarantineOf(row));
        }
        return out;
      });
}

}  // namespace npuperf::server
