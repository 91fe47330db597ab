// PostgresStore: baselines pinned per team and label.
#include "absl/strings/str_cat.h"
#include "server/store/postgres/postgres_store.h"

namespace npuperf::server {

absl::StatusOr<Baseline> PostgresStore::PinBaseline(const std::string& team,
                                                    const Baseline& pin) {
  return pool_.Run("pin baseline", [&](pqxx::work& tx) -> absl::StatusOr<Baseline> {
    const bool round = pin.round_id > 0;
    auto found = round ? tx.exec_params("SELECT 1 FROM rounds WHERE id = $1 AND team = $2",
                                        pin.round_id, team)
                       : tx.exec_params("SELECT 1 FROM collections WHERE id = $1 AND team = $2",
                                        pin.collection_id, team);
    if (found.empty()) {
      return absl::NotFoundError(round ? absl::StrCat("round ", pin.round_id, " not found")
                                       : absl::StrCat("collection ", pin.collection_id, " not found"));
    }
    tx.exec_params(
        "INSERT INTO baselines (team, label, round_id, collection_id, pinned_ms) "
        "VALUES ($1, $2, NULLIF($3, 0::bigint), NULLIF($4, ''), $5) ON CONFLICT (team, label) DO "
        "UPDATE SET round_id = EXCLUDED.round_id, collection_id = EXCLUDED.collection_id, "
        "pinned_ms = EXCLUDED.pinned_ms",
        team, pin.label, pin.round_id, pin.collection_id, pin.pinned_ms);
    return pin;
  });
}

absl::StatusOr<Baseline> PostgresStore::GetBaseline(const std::string& team,
                                                    const std::string& label) {
  return pool_.Run("get baseline", [&](pqxx::work& tx) -> absl::StatusOr<Baseline> {
    auto r = tx.exec_params(
        "SELECT COALESCE(round_id, 0), COALESCE(collection_id, ''), pinned_ms FROM baselines "
        "WHERE team = $1 AND label = $2",
        team, label);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("no baseline pinned for ", label));
    Baseline b;
    b.label = label;
    b.round_id = r[0][0].as<int64_t>();
    b.collection_id = r[0][1].as<std::string>();
    b.pinned_ms = r[0][2].as<int64_t>();
    return b;
  });
}

}  // namespace npuperf::server
