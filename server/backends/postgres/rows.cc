#include "server/backends/postgres/rows.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/time_util.h"
#include "nlohmann/json.hpp"
#include "server/core/job_state.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

// Sets a time field of m from a column of milliseconds. NULL leaves it unset,
// so the field is absent rather than 1970-01-01 (mutable_* would create it).
template <typename Message>
void SetTime(const pqxx::field& f, Message& m, google::protobuf::Timestamp* (Message::*field)()) {
  if (!f.is_null()) *(m.*field)() = TimeUtil::MillisecondsToTimestamp(f.as<int64_t>());
}

}  // namespace

std::string PgBlob(const pqxx::field& f) { return pqxx::binarystring(f).str(); }

pqxx::binarystring PgBytes(const std::string& bytes) { return pqxx::binarystring(bytes); }

v1::Collection PgCollectionFromRow(const pqxx::row& row) {
  v1::Collection c;
  c.set_id(row["id"].as<std::string>());
  c.set_team(row["team"].as<std::string>());
  c.mutable_spec()->ParseFromString(PgBlob(row["spec"]));
  c.set_state(static_cast<v1::CollectionState>(row["state"].as<int>()));
  if (!row["idempotency_key"].is_null()) {
    c.set_idempotency_key(row["idempotency_key"].as<std::string>());
  }
  c.set_cancel_reason(row["cancel_reason"].as<std::string>());
  SetTime(row["created_ms"], c, &v1::Collection::mutable_created_at);
  SetTime(row["finished_ms"], c, &v1::Collection::mutable_finished_at);
  return c;
}

v1::Job PgJobFromRow(const pqxx::row& row) {
  // By position, in NPUPERF_PG_JOB_COLUMNS order: a lookup by name is a scan
  // of the column names (libpq's PQfnumber) for every field of every row.
  v1::Job j;
  j.set_id(row[0].as<int64_t>());
  j.set_collection_id(row[1].as<std::string>());
  j.set_operator_name(row[2].as<std::string>());
  j.set_case_id(row[3].as<std::string>());
  j.set_op_name(row[4].as<std::string>());
  j.set_state(static_cast<v1::JobState>(row[5].as<int>()));
  j.set_attempt(row[6].as<int>());
  j.set_max_attempts(row[7].as<int>());
  if (!row[8].is_null()) {
    auto* p = j.mutable_placement();
    p->set_agent_id(row[8].as<std::string>());
    p->set_host(row[9].as<std::string>(""));
    p->set_device_id(row[10].as<int>(0));
    p->set_soc(row[11].as<std::string>(""));
  }
  if (!row[12].is_null()) j.mutable_progress()->ParseFromString(PgBlob(row[12]));
  j.set_reason(row[13].as<std::string>());
  if (!row[14].is_null()) j.set_round_id(row[14].as<int64_t>());
  if (!row[15].is_null()) j.set_kernel_time_us(row[15].as<double>());
  if (!row[16].is_null()) j.set_bound_label(row[16].as<std::string>());
  SetTime(row[17], j, &v1::Job::mutable_queued_at);
  SetTime(row[18], j, &v1::Job::mutable_started_at);
  SetTime(row[19], j, &v1::Job::mutable_finished_at);
  if (!row[20].is_null()) j.mutable_discovery()->ParseFromString(PgBlob(row[20]));
  return j;
}

v1::Round PgRoundFromRow(const pqxx::row& row, bool with_evidence_json) {
  v1::Round r;
  r.set_id(row[0].as<int64_t>());
  r.set_collection_id(row[1].as<std::string>());
  r.set_job_id(row[2].as<int64_t>());
  r.set_attempt(row[3].as<int>());
  r.set_team(row[4].as<std::string>());
  r.set_operator_name(row[5].as<std::string>());
  r.set_case_id(row[6].as<std::string>());
  *r.mutable_created_at() = TimeUtil::MillisecondsToTimestamp(row[7].as<int64_t>());
  r.mutable_evidence()->ParseFromString(PgBlob(row[8]));
  if (!with_evidence_json) {  // list views leave out the rendered documents
    r.mutable_evidence()->clear_evidence_json();
    r.mutable_evidence()->clear_summary_text();
    r.mutable_evidence()->clear_summary_markdown();
  }
  return r;
}

v1::AgentStatus PgAgentFromRow(const pqxx::row& row) {
  v1::AgentStatus a;
  a.set_agent_id(row[0].as<std::string>());
  a.set_host(row[1].as<std::string>());
  a.set_version(row[2].as<std::string>());
  a.set_state(row[3].as<std::string>());
  *a.mutable_last_seen() = TimeUtil::MillisecondsToTimestamp(row[4].as<int64_t>());
  v1::RegisterAgentRequest info;
  if (info.ParseFromString(PgBlob(row[5]))) {
    a.mutable_labels()->insert(info.labels().begin(), info.labels().end());
  }
  return a;
}

v1::DeviceStatus PgDeviceFromRow(const pqxx::row& row, bool agent_online) {
  v1::DeviceStatus d;
  d.set_device_id(row[0].as<int>());
  d.set_soc(row[1].as<std::string>());
  const bool leased = !row[3].is_null();
  d.set_state(DeviceStatusName(agent_online, row[2].as<int>(), leased));
  if (leased) d.set_job_id(row[3].as<int64_t>());
  return d;
}

std::string PgLabelsJson(const std::map<std::string, std::string>& labels) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : labels) j[k] = v;
  return j.dump();
}

absl::StatusOr<std::string> PgFiguresJson(
    const std::vector<std::pair<std::string, double>>& metrics) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : metrics) {
    if (!std::isfinite(value)) {
      return absl::InvalidArgumentError(absl::StrCat("metric ", name, " must be a finite number"));
    }
    j[name] = value;  // nlohmann prints a double that reads back bit for bit
  }
  return j.dump();
}

std::string PgIntArray(const std::vector<int>& values) {
  return absl::StrCat("{", absl::StrJoin(values, ","), "}");
}

}  // namespace npuperf::server
