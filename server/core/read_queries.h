#pragma once

#include <functional>
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
// their page tokens, the agent listing and collection watches. Each request
// is checked here, in one place (INVALID_ARGUMENT naming the field), and
// scoped to the caller's team: another team's collection or round reads as
// NOT_FOUND. The service adapters only authenticate, translate and call.
// Thread-safe (stateless beyond the injected Store and notifier, which must
// outlive it).
class ReadQueries {
 public:
  // updates: bumped on every change of a collection (Scheduler::updates()).
  ReadQueries(Store& store, ChangeNotifier& updates);

  // The collection, its complete counts and one page of its jobs
  // (job_page_size 0..kMaxJobsPage, 0: kDefaultJobsPage; a page also ends
  // before kMaxPageBytes; the token is the last job id), with its
  // waiting_reason when jobs are queued.
  absl::StatusOr<v1::GetCollectionResponse> GetCollection(const std::string& team,
                                                          const v1::GetCollectionRequest& req);
  // Newest first; page_size 0..kMaxCollectionsPage (0: the default), and a
  // page ends before kMaxPageBytes. The page token is "<created_ms>:<id>" of
  // the last collection of a page that is not the last one. Unknown states
  // are INVALID_ARGUMENT.
  absl::StatusOr<v1::ListCollectionsResponse> ListCollections(
      const std::string& team, const v1::ListCollectionsRequest& req);

  // Called with each event of a watch; false when the watcher went away.
  using WatchSink = std::function<bool(const v1::WatchCollectionResponse&)>;
  // Streams a collection: its snapshot at once (with its waiting_reason),
  // then one event per change (with the first job that differs), until it is
  // terminal (OK), the sink refuses an event (CANCELLED) or stop() is true
  // (UNAVAILABLE). Waits on `updates`
  // between reads, and re-reads every kWatchRereadPeriod even without a
  // notification.
  absl::Status WatchCollection(const std::string& team, const v1::WatchCollectionRequest& req,
                               const std::function<bool()>& stop, const WatchSink& emit);

  absl::StatusOr<v1::GetRoundResponse> GetRound(const std::string& team,
                                                const v1::GetRoundRequest& req);
  // Needs operator_name or collection_id; page_size 0..kMaxRoundsPage (0:
  // the default); the page token is the last round id.
  absl::StatusOr<v1::ListRoundsResponse> ListRounds(const std::string& team,
                                                    const v1::ListRoundsRequest& req);
  // Every agent and its devices (agents are shared by all teams), as much as
  // `viewer` may see (core/agent_rules.h ViewAgents).
  absl::StatusOr<v1::ListAgentsResponse> ListAgents(const AgentsViewer& viewer);

 private:
  // Sets c->waiting_reason when it has queued jobs that no online agent can
  // take (WhyUnplaceable over the store's agents).
  absl::Status FillWaitingReason(v1::Collection* c);

  Store& store_;
  ChangeNotifier& updates_;
};

}  // namespace npuperf::server
