#pragma once

#include <map>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "npuperf/v1/agent_service.pb.h"
#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/query_service.pb.h"

// Row <-> message mapping for PostgresStore (internal to the PostgreSQL
// backend). Rows come from the statements of statements.cc and use the same
// column lists as sqlite/rows.h, so both backends fill the messages
// the same way. (The mapping is written twice because SQLiteCpp columns and
// pqxx fields share no interface; a column-accessor adapter would cost more
// than these 100 lines.)
namespace npuperf::server {

// bytea field -> raw bytes; a bytea parameter from raw bytes.
std::string PgBlob(const pqxx::field& f);
pqxx::binarystring PgBytes(const std::string& bytes);

v1::Collection PgCollectionFromRow(const pqxx::row& row);
// A job from a row of NPUPERF_PG_JOB_COLUMNS, in that order.
v1::Job PgJobFromRow(const pqxx::row& row);
// with_evidence_json=false leaves evidence.evidence_json empty (list views).
v1::Round PgRoundFromRow(const pqxx::row& row, bool with_evidence_json);
v1::AgentStatus PgAgentFromRow(const pqxx::row& row);
// A device row of ListAgents: its state as DeviceStatusName says.
v1::DeviceStatus PgDeviceFromRow(const pqxx::row& row, bool agent_online);

// Filter parameters: labels as a JSON object, states as an int[] literal.
std::string PgLabelsJson(const std::map<std::string, std::string>& labels);
std::string PgIntArray(const std::vector<int>& values);
// A round's figures (rounds.figures, migration 0023) as a JSON object of
// name -> number in a round-trip form (exact but for -0; a repeated name keeps
// its last value, like SQLite's INSERT OR REPLACE). INVALID_ARGUMENT naming
// the first figure that is NaN or infinite, which JSON cannot hold.
absl::StatusOr<std::string> PgFiguresJson(
    const std::vector<std::pair<std::string, double>>& metrics);

}  // namespace npuperf::server
