// SqliteStore: calibrations and the noise they measured (migration 0016;
// server/compare/calibrations.h runs them). One connection and BEGIN
// IMMEDIATE make the finish (compare-and-set plus spreads) atomic.
#include <optional>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/sqlite_store.h"

namespace npuperf::server {
namespace {

#define NPUPERF_SQLITE_CALIBRATION_COLUMNS \
  "id, team, source_collection_id, runs, state, reason, created_ms, COALESCE(finished_ms, 0)"

#define NPUPERF_SQLITE_NOISE_COLUMNS                                                            \
  "soc, mode, operator_name, case_id, family, spread, rounds, threshold, far, calibration_id, " \
  "measured_ms"

// The newest row per (soc, mode, operator, case, family) of team ?1 among
// the rows matching `where` (a literal).
#define NPUPERF_SQLITE_NEWEST_NOISE(where)                                                        \
  "SELECT " NPUPERF_SQLITE_NOISE_COLUMNS                                                          \
  " FROM noise_spreads WHERE id IN (SELECT MAX(id) FROM noise_spreads WHERE team = ?1 AND " where \
  " GROUP BY soc, mode, operator_name, case_id, family) ORDER BY operator_name, "                 \
  "case_id, soc, mode, family"

CalibrationRecord ReadCalibration(SQLite::Statement& q) {
  CalibrationRecord c;
  c.id = q.getColumn(0).getInt64();
  c.team = q.getColumn(1).getString();
  c.source_collection_id = q.getColumn(2).getString();
  c.runs = q.getColumn(3).getInt();
  c.state = static_cast<v1::CalibrationState>(q.getColumn(4).getInt());
  c.reason = q.getColumn(5).getString();
  c.created_ms = q.getColumn(6).getInt64();
  c.finished_ms = q.getColumn(7).getInt64();
  return c;
}

NoiseRecord ReadNoise(SQLite::Statement& q) {
  NoiseRecord n;
  n.soc = q.getColumn(0).getString();
  n.mode = q.getColumn(1).getString();
  n.operator_name = q.getColumn(2).getString();
  n.case_id = q.getColumn(3).getString();
  n.family = q.getColumn(4).getString();
  n.spread = q.getColumn(5).getDouble();
  n.rounds = q.getColumn(6).getInt();
  n.threshold = q.getColumn(7).getDouble();
  n.far = q.getColumn(8).getDouble();
  n.calibration_id = q.getColumn(9).getInt64();
  n.measured_ms = q.getColumn(10).getInt64();
  return n;
}

std::optional<CalibrationRecord> CalibrationById(SQLite::Database& db, const std::string& team,
                                                 int64_t id) {
  SQLite::Statement q(db, "SELECT " NPUPERF_SQLITE_CALIBRATION_COLUMNS
                          " FROM calibrations WHERE id = ? AND team = ?");
  q.bind(1, id);
  q.bind(2, team);
  if (!q.executeStep()) return std::nullopt;
  return ReadCalibration(q);
}

void InsertSpread(SQLite::Database& db, const CalibrationOutcome& o, const NoiseRecord& n) {
  SQLite::Statement ins(db,
                        "INSERT INTO noise_spreads (team, soc, mode, operator_name, case_id, "
                        "family, spread, rounds, threshold, far, calibration_id, measured_ms) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  ins.bind(1, o.team);
  ins.bind(2, n.soc);
  ins.bind(3, n.mode);
  ins.bind(4, n.operator_name);
  ins.bind(5, n.case_id);
  ins.bind(6, n.family);
  ins.bind(7, n.spread);
  ins.bind(8, n.rounds);
  ins.bind(9, n.threshold);
  ins.bind(10, n.far);
  ins.bind(11, o.id);
  ins.bind(12, o.now_ms);
  ins.exec();
}

}  // namespace

absl::StatusOr<CalibrationRecord> SqliteStore::InsertCalibration(const CalibrationRecord& c) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement ins(*db_,
                          "INSERT INTO calibrations (team, source_collection_id, runs, state, "
                          "created_ms) VALUES (?, ?, ?, ?, ?)");
    ins.bind(1, c.team);
    ins.bind(2, c.source_collection_id);
    ins.bind(3, c.runs);
    ins.bind(4, static_cast<int>(v1::CALIBRATION_STATE_RUNNING));
    ins.bind(5, c.created_ms);
    ins.exec();
    CalibrationRecord out = c;
    out.id = db_->getLastInsertRowid();
    out.state = v1::CALIBRATION_STATE_RUNNING;
    out.finished_ms = 0;
    out.reason.clear();
    out.collection_ids.clear();
    out.spreads.clear();
    return out;
  } catch (...) {
    return CurrentSqliteError("insert calibration");
  }
}

absl::StatusOr<CalibrationRecord> SqliteStore::GetCalibration(const std::string& team, int64_t id) {
  absl::MutexLock lock(&mu_);
  try {
    std::optional<CalibrationRecord> c = CalibrationById(*db_, team, id);
    if (!c) return absl::NotFoundError(absl::StrCat("calibration ", id, " not found"));
    SQLite::Statement ids(*db_,
                          "SELECT j.value FROM calibrations c, json_each(c.collection_ids) j "
                          "WHERE c.id = ? ORDER BY j.key");
    ids.bind(1, id);
    while (ids.executeStep()) c->collection_ids.push_back(ids.getColumn(0).getString());
    SQLite::Statement q(*db_, "SELECT " NPUPERF_SQLITE_NOISE_COLUMNS
                              " FROM noise_spreads WHERE calibration_id = ? ORDER BY "
                              "operator_name, case_id, soc, mode, family");
    q.bind(1, id);
    while (q.executeStep()) c->spreads.push_back(ReadNoise(q));
    return *c;
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("calibration ", id));
  }
}

absl::StatusOr<std::vector<CalibrationRecord>> SqliteStore::ListRunningCalibrations(int32_t limit) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, "SELECT " NPUPERF_SQLITE_CALIBRATION_COLUMNS
                              " FROM calibrations WHERE state = ? ORDER BY id LIMIT ?");
    q.bind(1, static_cast<int>(v1::CALIBRATION_STATE_RUNNING));
    q.bind(2, limit);
    std::vector<CalibrationRecord> out;
    while (q.executeStep()) out.push_back(ReadCalibration(q));
    return out;
  } catch (...) {
    return CurrentSqliteError("running calibrations");
  }
}

absl::Status SqliteStore::FinishCalibration(const CalibrationOutcome& o) {
  if (o.state != v1::CALIBRATION_STATE_SUCCEEDED && o.state != v1::CALIBRATION_STATE_FAILED) {
    return absl::InvalidArgumentError("state: a calibration finishes SUCCEEDED or FAILED");
  }
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    std::optional<CalibrationRecord> c = CalibrationById(*db_, o.team, o.id);
    if (!c) return absl::NotFoundError(absl::StrCat("calibration ", o.id, " not found"));
    if (c->state != v1::CALIBRATION_STATE_RUNNING) {
      return absl::FailedPreconditionError(absl::StrCat(
          "calibration ", o.id, " is ", v1::CalibrationState_Name(c->state), ", not RUNNING"));
    }
    SQLite::Statement up(*db_,
                         "UPDATE calibrations SET state = ?, reason = ?, collection_ids = ?, "
                         "finished_ms = ? WHERE id = ? AND state = ?");
    up.bind(1, static_cast<int>(o.state));
    up.bind(2, o.reason);
    up.bind(3, JsonStringArray(o.collection_ids));
    up.bind(4, o.now_ms);
    up.bind(5, o.id);
    up.bind(6, static_cast<int>(v1::CALIBRATION_STATE_RUNNING));
    up.exec();
    for (const NoiseRecord& n : o.spreads) InsertSpread(*db_, o, n);
    tx.commit();
    return absl::OkStatus();
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("finish calibration ", o.id));
  }
}

absl::StatusOr<std::vector<NoiseRecord>> SqliteStore::ListNoise(const std::string& team,
                                                                const std::string& operator_name,
                                                                int32_t limit) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_,
                        NPUPERF_SQLITE_NEWEST_NOISE("(?2 = '' OR operator_name = ?2)") " LIMIT ?3");
    q.bind(1, team);
    q.bind(2, operator_name);
    q.bind(3, limit);
    std::vector<NoiseRecord> out;
    while (q.executeStep()) out.push_back(ReadNoise(q));
    return out;
  } catch (...) {
    return CurrentSqliteError("list noise");
  }
}

absl::StatusOr<std::vector<NoiseRecord>> SqliteStore::NoiseOfCases(
    const std::string& team, const std::vector<std::string>& case_keys) {
  if (case_keys.empty()) return std::vector<NoiseRecord>();
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(
        *db_, NPUPERF_SQLITE_NEWEST_NOISE("operator_name || '/' || case_id IN (SELECT value FROM "
                                          "json_each(?2))"));
    q.bind(1, team);
    q.bind(2, JsonStringArray(case_keys));
    std::vector<NoiseRecord> out;
    while (q.executeStep()) out.push_back(ReadNoise(q));
    return out;
  } catch (...) {
    return CurrentSqliteError("noise of cases");
  }
}

}  // namespace npuperf::server
