// SqliteStore: baselines pinned per team and label.
#include <mutex>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "absl/strings/str_cat.h"
#include "server/store/sqlite/sqlite_store.h"
#include "server/store/sqlite/errors.h"

namespace npuperf::server {

absl::StatusOr<Baseline> SqliteStore::PinBaseline(const std::string& team, const Baseline& pin) {
  std::lock_guard<std::mutex> lock(mu_);
  return GuardSqlite("pin baseline", [&]() -> absl::StatusOr<Baseline> {
    const bool round = pin.round_id > 0;
    SQLite::Statement q(*db_, round ? "SELECT 1 FROM rounds WHERE id = ? AND team = ?"
                                    : "SELECT 1 FROM collections WHERE id = ? AND team = ?");
    if (round) {
      q.bind(1, pin.round_id);
    } else {
      q.bind(1, pin.collection_id);
    }
    q.bind(2, team);
    if (!q.executeStep()) {
      return absl::NotFoundError(round ? absl::StrCat("round ", pin.round_id, " not found")
                                       : absl::StrCat("collection ", pin.collection_id, " not found"));
    }
    SQLite::Statement put(*db_,
                          "INSERT OR REPLACE INTO baselines (team, label, round_id, collection_id, "
                          "pinned_ms) VALUES (?, ?, ?, ?, ?)");
    put.bind(1, team);
    put.bind(2, pin.label);
    if (round) {
      put.bind(3, pin.round_id);
      put.bind(4);
    } else {
      put.bind(3);
      put.bind(4, pin.collection_id);
    }
    put.bind(5, pin.pinned_ms);
    put.exec();
    return pin;
  });
}

absl::StatusOr<Baseline> SqliteStore::GetBaseline(const std::string& team,
                                                  const std::string& label) {
  std::lock_guard<std::mutex> lock(mu_);
  return GuardSqlite("get baseline", [&]() -> absl::StatusOr<Baseline> {
    SQLite::Statement q(*db_,
                        "SELECT round_id, collection_id, pinned_ms FROM baselines WHERE team = ? "
                        "AND label = ?");
    q.bind(1, team);
    q.bind(2, label);
    if (!q.executeStep()) return absl::NotFoundError(absl::StrCat("no baseline pinned for ", label));
    Baseline b;
    b.label = label;
    if (!q.getColumn(0).isNull()) b.round_id = q.getColumn(0).getInt64();
    if (!q.getColumn(1).isNull()) b.collection_id = q.getColumn(1).getString();
    b.pinned_ms = q.getColumn(2).getInt64();
    return b;
  });
}

}  // namespace npuperf::server
