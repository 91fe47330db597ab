// PostgresStore: calibrations and the noise they measured (migration 0016;
// server/compare/calibrations.h runs them). Finishing reads the row FOR
// UPDATE and writes its state and spreads in one transaction, so two
// replicas advancing one calibration at once finish it once.
#include <optional>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/statements.h"

namespace npuperf::server {
namespace {

CalibrationRecord CalibrationOf(const pqxx::row& row) {
  CalibrationRecord c;
  c.id = row[0].as<int64_t>();
  c.team = row[1].as<std::string>();
  c.source_collection_id = row[2].as<std::string>();
  c.runs = row[3].as<int>();
  c.state = static_cast<v1::CalibrationState>(row[4].as<int>());
  c.reason = row[5].as<std::string>();
  c.created_ms = row[6].as<int64_t>();
  c.finished_ms = row[7].as<int64_t>();
  return c;
}

NoiseRecord NoiseOf(const pqxx::row& row) {
  NoiseRecord n;
  n.soc = row[0].as<std::string>();
  n.mode = row[1].as<std::string>();
  n.operator_name = row[2].as<std::string>();
  n.case_id = row[3].as<std::string>();
  n.family = row[4].as<std::string>();
  n.spread = row[5].as<double>();
  n.rounds = row[6].as<int>();
  n.threshold = row[7].as<double>();
  n.far = row[8].as<double>();
  n.calibration_id = row[9].as<int64_t>();
  n.measured_ms = row[10].as<int64_t>();
  return n;
}

std::vector<NoiseRecord> NoiseRows(const pqxx::result& rows) {
  std::vector<NoiseRecord> out;
  out.reserve(rows.size());
  for (const auto& row : rows) out.push_back(NoiseOf(row));
  return out;
}

}  // namespace

absl::StatusOr<CalibrationRecord> PostgresStore::InsertCalibration(const CalibrationRecord& c) {
  return pool_->Run("insert calibration", [&](pqxx::work& tx) -> absl::StatusOr<CalibrationRecord> {
    CalibrationRecord out = c;
    out.id = tx.exec_prepared("calibration_insert", c.team, c.source_collection_id, c.runs,
                              c.created_ms)[0][0]
                 .as<int64_t>();
    out.state = v1::CALIBRATION_STATE_RUNNING;
    out.finished_ms = 0;
    out.reason.clear();
    out.collection_ids.clear();
    out.spreads.clear();
    return out;
  });
}

absl::StatusOr<CalibrationRecord> PostgresStore::GetCalibration(const std::string& team,
                                                                int64_t id) {
  return pool_->Run(absl::StrCat("calibration ", id),
                    [&](pqxx::work& tx) -> absl::StatusOr<CalibrationRecord> {
                      const pqxx::result rows = tx.exec_prepared("calibration_by_id", id, team);
                      if (rows.empty())
                        return absl::NotFoundError(absl::StrCat("calibration ", id, " not found"));
                      CalibrationRecord c = CalibrationOf(rows[0]);
                      for (const auto& row : tx.exec_prepared("calibration_collections", id)) {
                        c.collection_ids.push_back(row[0].as<std::string>());
                      }
                      c.spreads = NoiseRows(tx.exec_prepared("noise_of_calibration", id));
                      return c;
                    });
}

absl::StatusOr<std::vector<CalibrationRecord>> PostgresStore::ListRunningCalibrations(
    int32_t limit) {
  return pool_->Run("running calibrations",
                    [&](pqxx::work& tx) -> absl::StatusOr<std::vector<CalibrationRecord>> {
                      std::vector<CalibrationRecord> out;
                      for (const auto& row : tx.exec_prepared("calibration_running", limit)) {
                        out.push_back(CalibrationOf(row));
                      }
                      return out;
                    });
}

absl::Status PostgresStore::FinishCalibration(const CalibrationOutcome& o) {
  if (o.state != v1::CALIBRATION_STATE_SUCCEEDED && o.state != v1::CALIBRATION_STATE_FAILED) {
    return absl::InvalidArgumentError("state: a calibration finishes SUCCEEDED or FAILED");
  }
  return pool_->Run(absl::StrCat("finish calibration ", o.id), [&](pqxx::work& tx) -> absl::Status {
    const pqxx::result rows = tx.exec_prepared("calibration_by_id_lock", o.id, o.team);
    if (rows.empty()) {
      return absl::NotFoundError(absl::StrCat("calibration ", o.id, " not found"));
    }
    const CalibrationRecord c = CalibrationOf(rows[0]);
    if (c.state != v1::CALIBRATION_STATE_RUNNING) {
      return absl::FailedPreconditionError(absl::StrCat(
          "calibration ", o.id, " is ", v1::CalibrationState_Name(c.state), ", not RUNNING"));
    }
    tx.exec_prepared("calibration_finish", static_cast<int>(o.state), o.reason,
                     JsonStringArray(o.collection_ids), o.now_ms, o.id);
    for (const NoiseRecord& n : o.spreads) {
      tx.exec_prepared("noise_insert", o.team, n.soc, n.mode, n.operator_name, n.case_id, n.family,
                       n.spread, n.rounds, n.threshold, n.far, o.id, o.now_ms);
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<NoiseRecord>> PostgresStore::ListNoise(const std::string& team,
                                                                  const std::string& operator_name,
                                                                  int32_t limit) {
  return pool_->Run("list noise", [&](pqxx::work& tx) -> absl::StatusOr<std::vector<NoiseRecord>> {
    return NoiseRows(tx.exec_prepared("noise_list", team, operator_name, limit));
  });
}

absl::StatusOr<std::vector<NoiseRecord>> PostgresStore::NoiseOfCases(
    const std::string& team, const std::vector<std::string>& case_keys) {
  if (case_keys.empty()) return std::vector<NoiseRecord>();
  return pool_->Run(
      "noise of cases", [&](pqxx::work& tx) -> absl::StatusOr<std::vector<NoiseRecord>> {
        return NoiseRows(tx.exec_prepared("noise_of_cases", team, JsonStringArray(case_keys)));
      });
}

}  // namespace npuperf::server
