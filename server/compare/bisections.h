// Bisections: the search of a first-parent commit range for the commit that
// changed one operator case's duration (compare/bisection_rules.h has the
// rules and why; docs/comparisons.md, "Bisection", the contract).
//
// The client packs the operator directory at every revision and uploads the
// bundles (the server never sees the repository); a bisection is then a
// state machine over ordinary collections, as a confirmation is: each run
// is a one-job collection of one revision's bundle, submitted through the
// scheduler (priority, caps, fairness, quotas and leases apply) with server
// labels (npuperf.bisection=<id>) that keep its rounds out of series and
// regression listings. Advance moves it as far as it can go now: when it is
// read (Get) and on the reaper's round (AdvancePending), on any replica.
// Every write is a compare-and-set on the stored version and every
// submission carries an idempotency key of the bisection and step, so
// replicas advancing one at once submit each run once; a replica that loses
// the race cancels the runs only it submitted.
//
//   MEASURING_ENDS -> BISECTING -> EXPLAINING -> DONE
//         |               |                      (FAILED, CANCELLED from any)
//         +-> REFUSED     +-> DONE (no culprit, or no explanation asked)
//
// Thread-safe (stateless beyond the injected Store, Clock and callbacks).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "npuperf/v1/collection_service.pb.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/compare/bisection_rules.h"
#include "server/core/scheduler.h"
#include "server/store/store.h"

namespace npuperf::server {

class Bisections {
 public:
  // Scheduler::SubmitForServer: submits req for team with server labels.
  using Submit = ServerSubmit;
  // Scheduler::Cancel: cancels collection id of team.
  using Cancel = ServerCancel;
  // Called once per bisection that reaches a terminal state (metrics).
  using OnFinish = std::function<void(v1::BisectionState)>;

  Bisections(Store& store, Clock& clock, Submit submit, Cancel cancel,
             OnFinish on_finish = nullptr);

  // StartBisection: INVALID_ARGUMENT naming the field (a bad range, a
  // revision twice, a malformed hash); NOT_FOUND naming the revision whose
  // bundle team did not upload; RESOURCE_EXHAUSTED when team has
  // kMaxRunningBisectionsPerTeam running. The ends start running at once.
  absl::StatusOr<v1::StartBisectionResponse> Start(const std::string& team,
                                                   const v1::StartBisectionRequest& req);
  // GetBisection, advanced first; NOT_FOUND for another team's.
  absl::StatusOr<v1::GetBisectionResponse> Get(const std::string& team,
                                               const v1::GetBisectionRequest& req);
  absl::StatusOr<v1::ListBisectionsResponse> List(const std::string& team,
                                                  const v1::ListBisectionsRequest& req);
  // CancelBisection: every run not finished is cancelled, then the state.
  absl::StatusOr<v1::CancelBisectionResponse> CancelOne(const std::string& team,
                                                        const v1::CancelBisectionRequest& req);
  // Advances every bisection not in a terminal state (at most
  // kMaxAdvancePerRound, newest first); returns how many ended.
  absl::StatusOr<int> AdvancePending();

  static constexpr int32_t kMaxAdvancePerRound = 500;
  // Bisections of one team not ended at once (Start: RESOURCE_EXHAUSTED).
  static constexpr int kMaxRunningBisectionsPerTeam = 8;
  // Culprits explained in standard mode at most (the first ones).
  static constexpr int kMaxExplainedCulprits = 3;

 private:
  // Moves rec as far as it can go now and stores it (see the header).
  absl::StatusOr<BisectionRecord> Advance(BisectionRecord rec);
  // Reads every unfinished step's collection (and a finished one's round).
  absl::Status RefreshSteps(BisectionRecord& rec);
  // The rules' view of the revisions (explanation runs left out), also
  // written into the revisions' server fields.
  std::vector<RevisionSamples> Measure(v1::Bisection& b) const;
  // Devices that could run the bisection's jobs now: online agents'
  // devices of its SoCs that are idle or busy (at least 1).
  absl::StatusOr<int> Parallelism(const v1::Bisection& b);
  // Queues one run of revision `revision`; a refused submission fails the
  // bisection with the reason (returns OK then).
  absl::Status SubmitRun(BisectionRecord& rec, int revision, const std::string& purpose,
                         std::vector<std::string>* submitted);
  // After the rules named culprits: their explanation runs, or DONE.
  absl::Status StartExplaining(BisectionRecord& rec, std::vector<std::string>* submitted);
  // Once the explanation runs ended: each culprit's comparison, then DONE.
  absl::Status Explain(BisectionRecord& rec);
  // Cancels every step not finished (best effort; logs what it cannot).
  void CancelRuns(BisectionRecord& rec, const std::string& reason);
  void Finish(BisectionRecord& rec, v1::BisectionState state, const std::string& reason);
  int64_t NowMs() { return ToUnixMillis(clock_.SystemNow()); }

  Store& store_;
  Clock& clock_;
  Submit submit_;
  Cancel cancel_;
  OnFinish on_finish_;
};

// True for DONE, REFUSED, FAILED and CANCELLED.
bool BisectionTerminal(v1::BisectionState state);

}  // namespace npuperf::server
