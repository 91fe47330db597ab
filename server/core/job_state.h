#pragma once

#include <optional>

#include "npuperf/v1/collection.pb.h"

namespace npuperf::server {

// Pure functions over job and collection states (no I/O). The transitions
// themselves (QUEUED -> LEASED -> RUNNING -> a terminal state, back to
// QUEUED on a lost lease or a retry; terminal states never change) are the
// WHERE clauses of the Store backends, decided by job_rules.h and specified
// by tests/server/store/store_conformance_transitions_test.cc.

// SUCCEEDED, FAILED and CANCELLED.
bool IsTerminal(v1::JobState state);
bool IsTerminal(v1::CollectionState state);

// Adds n jobs (default one) in `state` to the counts.
void CountJob(v1::JobState state, v1::JobCounts* counts, int n = 1);

// A collection's state from its job counts: CANCELLED once a cancel was
// requested and every job is terminal; SUCCEEDED when all succeeded; FAILED
// when all are terminal and one failed; RUNNING once any job left the queue.
v1::CollectionState DeriveCollectionState(const v1::JobCounts& counts, bool cancel_requested);

// Whether a progress report must recount its collection's jobs. It moves one
// live job (LEASED or RUNNING) to RUNNING: the collection holds a live job
// before and after, so DeriveCollectionState says RUNNING both times, cancel
// requested or not. Only a collection not stored as RUNNING (unknown, or left
// otherwise by an older server) is recounted; the rest skip a COUNT per report
// (issue 36).
bool ProgressNeedsCollectionRefresh(std::optional<v1::CollectionState> stored);

// Whether a result may skip recounting its collection's jobs: a collection
// stored as RUNNING whose job just ended (a terminal `next`) while another of
// its jobs is still queued or live holds a terminal and an unfinished job, so
// DeriveCollectionState says RUNNING again, cancel requested or not. The
// PostgreSQL store reads `others_unfinished` from its per-collection counters
// in O(1); a recount reads every job of the collection (issue 36: a
// 100,000-job batch counted 100,000 index entries per result).
bool ResultKeepsCollectionRunning(std::optional<v1::CollectionState> stored, v1::JobState next,
                                  bool others_unfinished);
// The part of that rule that needs no read: whether such a result may keep
// its collection RUNNING at all (ResultKeepsCollectionRunning is this and
// others_unfinished). The SQLite store reads others_unfinished only then.
bool ResultMayKeepCollectionRunning(std::optional<v1::CollectionState> stored, v1::JobState next);

// Lower-case name for logs and metrics labels ("queued", "leased", ...).
const char* JobStateName(v1::JobState state);
// A device's state as ListAgents and the /metrics gauge name it: "offline"
// when its agent is not online, "busy" with a live lease, else the state the
// agent reported (v1::DeviceState): "idle", "busy", "externally_locked",
// "unhealthy" or "unknown".
const char* DeviceStatusName(bool agent_online, int reported_state, bool leased);

}  // namespace npuperf::server
