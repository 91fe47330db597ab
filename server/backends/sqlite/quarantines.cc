// SqliteStore: device quarantine (migration 0017; core/device_health.h
// drives it; 0020 adds the suspect rounds of a canary quarantine). One
// connection and BEGIN IMMEDIATE make each insert-unless-current and each
// release atomic.
#include <optional>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/sqlite_store.h"

namespace npuperf::server {
namespace {

#define NPUPERF_SQLITE_QUARANTINE_COLUMNS                                          \
  "id, host, device_id, soc, reason, source, since_ms, COALESCE(released_ms, 0), " \
  "released_by, release_note, suspect_since_ms"

QuarantineRecord ReadQuarantine(SQLite::Statement& q) {
  QuarantineRecord r;
  r.id = q.getColumn(0).getInt64();
  r.host = q.getColumn(1).getString();
  r.device_id = q.getColumn(2).getInt();
  r.soc = q.getColumn(3).getString();
  r.reason = q.getColumn(4).getString();
  r.source = q.getColumn(5).getString();
  r.since_ms = q.getColumn(6).getInt64();
  r.released_ms = q.getColumn(7).getInt64();
  r.released_by = q.getColumn(8).getString();
  r.release_note = q.getColumn(9).getString();
  r.suspect_since_ms = q.getColumn(10).getInt64();
  return r;
}

std::optional<QuarantineRecord> CurrentQuarantine(SQLite::Database& db, const std::string& host,
                                                  int32_t device_id) {
  SQLite::Statement q(db, "SELECT " NPUPERF_SQLITE_QUARANTINE_COLUMNS
                          " FROM device_quarantines WHERE host = ? AND device_id = ? AND "
                          "released_ms IS NULL");
  q.bind(1, host);
  q.bind(2, device_id);
  if (!q.executeStep()) return std::nullopt;
  return ReadQuarantine(q);
}

}  // namespace

absl::StatusOr<std::pair<QuarantineRecord, bool>> SqliteStore::QuarantineDevice(
    const QuarantineRecord& q) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    if (std::optional<QuarantineRecord> cur = CurrentQuarantine(*db_, q.host, q.device_id)) {
      return std::make_pair(*cur, false);
    }
    SQLite::Statement ins(*db_,
                          "INSERT INTO device_quarantines (host, device_id, soc, reason, source, "
                          "since_ms, suspect_since_ms) VALUES (?, ?, ?, ?, ?, ?, ?)");
    ins.bind(1, q.host);
    ins.bind(2, q.device_id);
    ins.bind(3, q.soc);
    ins.bind(4, q.reason);
    ins.bind(5, q.source);
    ins.bind(6, q.since_ms);
    ins.bind(7, q.suspect_since_ms);
    ins.exec();
    QuarantineRecord out = q;
    out.id = db_->getLastInsertRowid();
    out.released_ms = 0;
    out.released_by.clear();
    out.release_note.clear();
    tx.commit();
    return std::make_pair(out, true);
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("quarantine ", q.host, ":", q.device_id));
  }
}

absl::StatusOr<QuarantineRecord> SqliteStore::ReleaseDevice(const std::string& host,
                                                            int32_t device_id,
                                                            const std::string& actor,
                                                            const std::string& note,
                                                            int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    std::optional<QuarantineRecord> cur = CurrentQuarantine(*db_, host, device_id);
    if (!cur) {
      return absl::FailedPreconditionError(
          absl::StrCat("device ", host, ":", device_id, " is not quarantined"));
    }
    SQLite::Statement up(*db_,
                         "UPDATE device_quarantines SET released_ms = ?, released_by = ?, "
                         "release_note = ? WHERE id = ?");
    up.bind(1, now_ms);
    up.bind(2, actor);
    up.bind(3, note);
    up.bind(4, cur->id);
    up.exec();
    tx.commit();
    cur->released_ms = now_ms;
    cur->released_by = actor;
    cur->release_note = note;
    return *cur;
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("release ", host, ":", device_id));
  }
}

absl::StatusOr<std::vector<QuarantineRecord>> SqliteStore::ListQuarantines(bool include_released,
                                                                           int32_t limit) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, "SELECT " NPUPERF_SQLITE_QUARANTINE_COLUMNS
                              " FROM device_quarantines WHERE (? OR released_ms IS NULL) "
                              "ORDER BY id DESC LIMIT ?");
    q.bind(1, include_released ? 1 : 0);
    q.bind(2, limit);
    std::vector<QuarantineRecord> out;
    while (q.executeStep()) out.push_back(ReadQuarantine(q));
    return out;
  } catch (...) {
    return CurrentSqliteError("list quarantines");
  }
}

absl::StatusOr<std::vector<QuarantineRecord>> SqliteStore::CanaryQuarantinesOf(
    const std::string& host, int32_t device_id) {
  absl::MutexLock lock(&mu_);
  try {
    // Bounded (Store::CanaryQuarantinesOf): released rows stay forever, and
    // this is read for every comparison that rests on the device's rounds.
    SQLite::Statement q(*db_, "SELECT " NPUPERF_SQLITE_QUARANTINE_COLUMNS
                              " FROM device_quarantines WHERE host = ? AND device_id = ? AND "
                              "source = 'canary' ORDER BY id DESC LIMIT 100");
    q.bind(1, host);
    q.bind(2, device_id);
    std::vector<QuarantineRecord> out;
    while (q.executeStep()) out.push_back(ReadQuarantine(q));
    return out;
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("canary quarantines of ", host, ":", device_id));
  }
}

}  // namespace npuperf::server
