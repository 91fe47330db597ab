#pragma once

#include <map>
#include <string>

#include "SQLiteCpp/Column.h"
#include "SQLiteCpp/Statement.h"
#include "npuperf/v1/agent_service.pb.h"
#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/comparison.pb.h"
#include "npuperf/v1/query_service.pb.h"

// Row <-> message mapping for SqliteStore (internal to the SQLite backend).
namespace npuperf::server {

// Job states as the jobs.state column stores them (npuperf.v1.JobState).
inline constexpr int kQueued = v1::JOB_STATE_QUEUED;
inline constexpr int kLeased = v1::JOB_STATE_LEASED;
inline constexpr int kRunning = v1::JOB_STATE_RUNNING;

// The collections that have a queued job and the id of each one's oldest
// queued job: a CTE `heads(cid, id)`, to be followed by a SELECT. It walks
// jobs_queued_by_collection (migration 0026) one collection at a time, a seek
// each, so its cost follows the collections with queued jobs, not the jobs
// queued (a GROUP BY read every queued job: 76 ms with 100,000; issue 36). INDEXED BY,
// because without ANALYZE's statistics SQLite walked jobs_by_lease instead, all
// queued jobs a step; the state is a literal so that the partial index applies.
inline constexpr char kQueueHeadsCte[] =
    "WITH RECURSIVE c(cid) AS (SELECT (SELECT MIN(collection_id) FROM jobs INDEXED BY "
    "jobs_queued_by_collection WHERE state = 1) UNION ALL SELECT (SELECT MIN(collection_id) FROM "
    "jobs INDEXED BY jobs_queued_by_collection WHERE state = 1 AND collection_id > c.cid) FROM c "
    "WHERE c.cid IS NOT NULL), heads(cid, id) AS (SELECT cid, (SELECT MIN(id) FROM jobs INDEXED "
    "BY jobs_by_collection_state WHERE collection_id = c.cid AND state = 1) FROM c WHERE c.cid IS "
    "NOT NULL) ";
static_assert(kQueued == 1, "kQueueHeadsCte spells the queued state as 1");

inline constexpr char kCollectionColumns[] =
    "id, team, spec, state, idempotency_key, cancel_reason, created_ms, finished_ms";
// The same with an empty spec (CollectionFromRow reads it as an empty spec).
inline constexpr char kCollectionColumnsWithoutSpec[] =
    "id, team, X'' AS spec, state, idempotency_key, cancel_reason, created_ms, finished_ms";
inline constexpr char kJobColumns[] =
    "id, collection_id, operator_name, case_id, op_name, state, attempt, max_attempts, agent_id, "
    "host, device_id, soc, progress, reason, round_id, kernel_time_us, bound_label, queued_ms, "
    "started_ms, finished_ms, discovery";
inline constexpr char kRoundColumns[] =
    "r.id, r.collection_id, r.job_id, r.attempt, r.team, r.operator_name, r.case_id, "
    "r.created_ms, r.evidence";

std::string BlobOf(const SQLite::Column& column);

// Label filters shared by collection and round queries: one EXISTS clause
// per label on the collection named by collection_column, with parameters
// :k<i>/:v<i>, and their binding (labels iterated in the same order).
void AppendLabelFilter(std::string* sql, size_t count, const char* collection_column);
void BindLabelFilter(SQLite::Statement& q, const std::map<std::string, std::string>& labels);
v1::Collection CollectionFromRow(SQLite::Statement& q);
v1::Job JobFromRow(SQLite::Statement& q);
// with_evidence=false leaves evidence.evidence_json empty (list views).
v1::Round RoundFromRow(SQLite::Statement& q, bool with_evidence_json);
v1::AgentStatus AgentFromRow(SQLite::Statement& q);
// A device row of ListAgents: its state as DeviceStatusName says.
v1::DeviceStatus DeviceFromRow(SQLite::Statement& q, bool agent_online);

}  // namespace npuperf::server
