#include "server/core/job_state.h"

#include "npuperf/v1/agent_service.pb.h"

namespace npuperf::server {

bool IsTerminal(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

bool IsTerminal(v1::CollectionState state) {
  return state == v1::COLLECTION_STATE_SUCCEEDED || state == v1::COLLECTION_STATE_FAILED ||
         state == v1::COLLECTION_STATE_CANCELLED;
}

void CountJob(v1::JobState state, v1::JobCounts* counts, int n) {
  counts->set_total(counts->total() + n);
  switch (state) {
    case v1::JOB_STATE_QUEUED: counts->set_queued(counts->queued() + n); break;
    case v1::JOB_STATE_LEASED: counts->set_leased(counts->leased() + n); break;
    case v1::JOB_STATE_RUNNING: counts->set_running(counts->running() + n); break;
    case v1::JOB_STATE_SUCCEEDED: counts->set_succeeded(counts->succeeded() + n); break;
    case v1::JOB_STATE_FAILED: counts->set_failed(counts->failed() + n); break;
    case v1::JOB_STATE_CANCELLED: counts->set_cancelled(counts->cancelled() + n); break;
    default: break;
  }
}

v1::CollectionState DeriveCollectionState(const v1::JobCounts& c, bool cancel_requested) {
  const int terminal = c.succeeded() + c.failed() + c.cancelled();
  if (terminal == c.total()) {
    if (cancel_requested && c.cancelled() > 0) return v1::COLLECTION_STATE_CANCELLED;
    if (c.failed() > 0) return v1::COLLECTION_STATE_FAILED;
    if (c.cancelled() > 0) return v1::COLLECTION_STATE_CANCELLED;
    return v1::COLLECTION_STATE_SUCCEEDED;
  }
  if (c.queued() == c.total()) return v1::COLLECTION_STATE_QUEUED;
  return v1::COLLECTION_STATE_RUNNING;
}

bool ProgressNeedsCollectionRefresh(std::optional<v1::CollectionState> stored) {
  return stored != v1::COLLECTION_STATE_RUNNING;
}

bool ResultKeepsCollectionRunning(std::optional<v1::CollectionState> stored, v1::JobState next,
                                  bool others_unfinished) {
  return ResultMayKeepCollectionRunning(stored, next) && others_unfinished;
}

bool ResultMayKeepCollectionRunning(std::optional<v1::CollectionState> stored, v1::JobState next) {
  return stored == v1::COLLECTION_STATE_RUNNING && IsTerminal(next);
}

const char* JobStateName(v1::JobState state) {
  switch (state) {
    case v1::JOB_STATE_QUEUED: return "queued";
    case v1::JOB_STATE_LEASED: return "leased";
    case v1::JOB_STATE_RUNNING: return "running";
    case v1::JOB_STATE_SUCCEEDED: return "succeeded";
    case v1::JOB_STATE_FAILED: return "failed";
    case v1::JOB_STATE_CANCELLED: return "cancelled";
    default: return "unspecified";
  }
}

const char* DeviceStatusName(bool agent_online, int reported_state, bool leased) {
  if (!agent_online) return "offline";
  if (leased) return "busy";
  switch (reported_state) {
    case v1::DEVICE_STATE_IDLE: return "idle";
    case v1::DEVICE_STATE_BUSY: return "busy";
    case v1::DEVICE_STATE_EXTERNALLY_LOCKED: return "externally_locked";
    case v1::DEVICE_STATE_UNHEALTHY: return "unhealthy";
    default: return "unknown";
  }
}

}  // namespace npuperf::server
