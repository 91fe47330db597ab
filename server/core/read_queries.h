#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "npuperf/v1/collection_service.pb.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/core/agent_rules.h"
#include "server/core/change_notifier.h"
#include "server/store/store.h"

namespace npuperf::server {

// The read side of the API: collection and round lookups, listings with
// their page tokens and the agent listing (watches: watch_hub.h). Each request
// is checked here, in one place (INVALID_ARGUMENT naming the field), and
// scoped to the caller's team: another team's collection or round reads as
// NOT_FOUND. The service adapters only authenticate, translate and call.
// Thread-safe (stateless beyond the injected Store, which must outlive it).
class ReadQueries {
 public:
  explicit ReadQueries(Store& store);

  // The collection, its complete counts and one page of its jobs
  // (job_page_size 0..kMaxJobsPage, 0: kDefaultJobsPage; a page also ends
  // before kMaxPageBytes; the token is the last job id), with its
  // waiting_reason when jobs are queued. Pages after the first (a token
  // given) carry no spec.
  absl::StatusOr<v1::GetCollectionResponse> GetCollection(const std::string& team,
                                                          const v1::GetCollectionRequest& req);
  // Newest first; page_size 0..kMaxCollectionsPage (0: the default), and a
  // page ends before kMaxPageBytes. The page token is "<created_ms>:<id>" of
  // the last collection of a page that is not the last one. Unknown states
  // are INVALID_ARGUMENT.
  absl::StatusOr<v1::ListCollectionsResponse> ListCollections(
      const std::string& team, const v1::ListCollectionsRequest& req);

  absl::StatusOr<v1::GetRoundResponse> GetRound(const std::string& team,
                                                const v1::GetRoundRequest& req);
  // Needs operator_name or collection_id; page_size 0..kMaxRoundsPage (0:
  // the default); the page token is the last round id.
  absl::StatusOr<v1::ListRoundsResponse> ListRounds(const std::string& team,
                                                    const v1::ListRoundsRequest& req);
  // Every agent and its devices (agents are shared by all teams), as much as
  // `viewer` may see (core/agent_rules.h ViewAgents).
  // Every agent with its devices' states; a quarantined device reads
  // "quarantined" with its reason (health_rules.h OverlayQuarantines).
  absl::StatusOr<v1::ListAgentsResponse> ListAgents(const AgentsViewer& viewer);

 private:
  Store& store_;
};

}  // namespace npuperf::server
