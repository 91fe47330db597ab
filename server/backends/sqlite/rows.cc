#include "server/backends/sqlite/rows.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"
#include "server/core/job_state.h"

namespace npuperf::server {
namespace {

// Sets a time field of m from a column of milliseconds. NULL leaves it unset,
// so the field is absent rather than 1970-01-01 (mutable_* would create it).
template <typename Message>
void SetTime(SQLite::Statement& q, const char* column, Message& m,
             google::protobuf::Timestamp* (Message::*field)()) {
  SQLite::Column c = q.getColumn(column);
  if (!c.isNull()) {
    *(m.*field)() = google::protobuf::util::TimeUtil::MillisecondsToTimestamp(c.getInt64());
  }
}

}  // namespace

std::string BlobOf(const SQLite::Column& column) {
  return std::string(static_cast<const char*>(column.getBlob()), column.getBytes());
}

void AppendLabelFilter(std::string* sql, size_t count, const char* collection_column) {
  for (size_t i = 0; i < count; ++i) {
    absl::StrAppend(sql, " AND EXISTS (SELECT 1 FROM collection_labels l WHERE l.collection_id = ",
                    collection_column, " AND l.key = :k", i, " AND l.value = :v", i, ")");
  }
}

void BindLabelFilter(SQLite::Statement& q, const std::map<std::string, std::string>& labels) {
  size_t i = 0;
  for (const auto& [k, v] : labels) {
    q.bind(absl::StrCat(":k", i), k);
    q.bind(absl::StrCat(":v", i), v);
    ++i;
  }
}

v1::Collection CollectionFromRow(SQLite::Statement& q) {
  v1::Collection c;
  c.set_id(q.getColumn("id").getString());
  c.set_team(q.getColumn("team").getString());
  c.mutable_spec()->ParseFromString(BlobOf(q.getColumn("spec")));
  c.set_state(static_cast<v1::CollectionState>(q.getColumn("state").getInt()));
  if (!q.getColumn("idempotency_key").isNull()) {
    c.set_idempotency_key(q.getColumn("idempotency_key").getString());
  }
  c.set_cancel_reason(q.getColumn("cancel_reason").getString());
  SetTime(q, "created_ms", c, &v1::Collection::mutable_created_at);
  SetTime(q, "finished_ms", c, &v1::Collection::mutable_finished_at);
  return c;
}

v1::Job JobFromRow(SQLite::Statement& q) {
  v1::Job j;
  j.set_id(q.getColumn("id").getInt64());
  j.set_collection_id(q.getColumn("collection_id").getString());
  j.set_operator_name(q.getColumn("operator_name").getString());
  j.set_case_id(q.getColumn("case_id").getString());
  j.set_op_name(q.getColumn("op_name").getString());
  j.set_state(static_cast<v1::JobState>(q.getColumn("state").getInt()));
  j.set_attempt(q.getColumn("attempt").getInt());
  j.set_max_attempts(q.getColumn("max_attempts").getInt());
  if (!q.getColumn("agent_id").isNull()) {
    auto* p = j.mutable_placement();
    p->set_agent_id(q.getColumn("agent_id").getString());
    p->set_host(q.getColumn("host").getString());
    p->set_device_id(q.getColumn("device_id").getInt());
    p->set_soc(q.getColumn("soc").getString());
  }
  if (!q.getColumn("progress").isNull()) {
    j.mutable_progress()->ParseFromString(BlobOf(q.getColumn("progress")));
  }
  j.set_reason(q.getColumn("reason").getString());
  if (!q.getColumn("round_id").isNull()) j.set_round_id(q.getColumn("round_id").getInt64());
  if (!q.getColumn("kernel_time_us").isNull()) {
    j.set_kernel_time_us(q.getColumn("kernel_time_us").getDouble());
  }
  if (!q.getColumn("bound_label").isNull())
    j.set_bound_label(q.getColumn("bound_label").getString());
  SetTime(q, "queued_ms", j, &v1::Job::mutable_queued_at);
  SetTime(q, "started_ms", j, &v1::Job::mutable_started_at);
  SetTime(q, "finished_ms", j, &v1::Job::mutable_finished_at);
  if (!q.getColumn("discovery").isNull()) {
    j.mutable_discovery()->ParseFromString(BlobOf(q.getColumn("discovery")));
  }
  return j;
}

v1::Round RoundFromRow(SQLite::Statement& q, bool with_evidence_json) {
  v1::Round r;
  r.set_id(q.getColumn(0).getInt64());
  r.set_collection_id(q.getColumn(1).getString());
  r.set_job_id(q.getColumn(2).getInt64());
  r.set_attempt(q.getColumn(3).getInt());
  r.set_team(q.getColumn(4).getString());
  r.set_operator_name(q.getColumn(5).getString());
  r.set_case_id(q.getColumn(6).getString());
  *r.mutable_created_at() =
      google::protobuf::util::TimeUtil::MillisecondsToTimestamp(q.getColumn(7).getInt64());
  r.mutable_evidence()->ParseFromString(BlobOf(q.getColumn(8)));
  if (!with_evidence_json) {  // list views leave out the rendered documents
    r.mutable_evidence()->clear_evidence_json();
    r.mutable_evidence()->clear_summary_text();
    r.mutable_evidence()->clear_summary_markdown();
  }
  return r;
}

v1::AgentStatus AgentFromRow(SQLite::Statement& q) {
  v1::AgentStatus a;
  a.set_agent_id(q.getColumn(0).getString());
  a.set_host(q.getColumn(1).getString());
  a.set_version(q.getColumn(2).getString());
  a.set_state(q.getColumn(3).getString());
  *a.mutable_last_seen() =
      google::protobuf::util::TimeUtil::MillisecondsToTimestamp(q.getColumn(4).getInt64());
  v1::RegisterAgentRequest info;
  if (info.ParseFromString(BlobOf(q.getColumn(5)))) {
    a.mutable_labels()->insert(info.labels().begin(), info.labels().end());
  }
  return a;
}

v1::DeviceStatus DeviceFromRow(SQLite::Statement& q, bool agent_online) {
  v1::DeviceStatus d;
  d.set_device_id(q.getColumn(0).getInt());
  d.set_soc(q.getColumn(1).getString());
  const bool leased = !q.getColumn(3).isNull();
  d.set_state(DeviceStatusName(agent_online, q.getColumn(2).getInt(), leased));
  if (leased) d.set_job_id(q.getColumn(3).getInt64());
  return d;
}

}  // namespace npuperf::server
