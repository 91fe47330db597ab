// Confirmations: the reruns of a REGRESSED or IMPROVED comparison of two
// rounds, interleaved on one device that measured neither, and the verdict
// they give (core/confirmation_rules.h has the rules and why;
// docs/comparisons.md, "Confirmation", the contract).
//
// A confirmation is a small state machine over ordinary collections: each
// step is a one-job collection of one side's bundle, submitted through the
// scheduler (so priority, caps, fairness, quotas and leases apply) once the
// step before it succeeded, with server labels (npuperf.confirmation=<id>)
// that keep its rounds out of series and regression listings. Advance moves
// it as far as it can go now: it runs when the confirmation is read (Get)
// and on the reaper's round (AdvancePending), on any replica; every write is
// a compare-and-set on the stored version, and every submission carries an
// idempotency key of the confirmation and step, so replicas advancing one at
// once submit each step once.
//
// Thread-safe (stateless beyond the injected Store, Clock and submit).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "npuperf/v1/collection_service.pb.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/compare/comparator.h"
#include "server/core/scheduler.h"
#include "server/store/store.h"

namespace npuperf::server {

class Confirmations {
 public:
  // Scheduler::SubmitForServer: submits req for team with server labels.
  using Submit = ServerSubmit;

  Confirmations(Store& store, Clock& clock, Submit submit);

  // RequestConfirmation: INVALID_ARGUMENT naming the field; NOT_FOUND for a
  // round of another team; FAILED_PRECONDITION when the rounds are of two
  // cases or their comparison is not REGRESSED or IMPROVED (naming it).
  // Without a device to rerun on, the confirmation is stored UNCONFIRMED
  // with the reason (asking again later tries again).
  absl::StatusOr<v1::RequestConfirmationResponse> Request(
      const std::string& team, const v1::RequestConfirmationRequest& req);
  // The same for a comparison already made (CompareCollections and
  // ListRegressions with confirm): comparison is CompareRounds(baseline,
  // candidate) under options, REGRESSED or IMPROVED.
  // Returns it and whether it was created (false: the pair had one).
  absl::StatusOr<std::pair<v1::Confirmation, bool>> Confirm(
      const std::string& team, const v1::Round& baseline, const v1::Round& candidate,
      const v1::RoundComparison& comparison, const v1::CompareOptions& options, int pairs);
  // GetConfirmation, advanced first; NOT_FOUND for another team's.
  absl::StatusOr<v1::GetConfirmationResponse> Get(const std::string& team,
                                                  const v1::GetConfirmationRequest& req);
  // Advances every pending confirmation (at most kMaxAdvancePerRound, oldest
  // first); returns how many reached a terminal state.
  absl::StatusOr<int> AdvancePending();

  // Pending confirmations one AdvancePending looks at.
  static constexpr int32_t kMaxAdvancePerRound = 200;

 private:
  // Moves rec as far as it can go now and stores it (compare-and-set; when
  // another writer won, the stored one is returned as it is).
  absl::StatusOr<ConfirmationRecord> Advance(ConfirmationRecord rec);
  // Submits step `step` of rec; a refused submission (a bundle no longer
  // stored, a quota) leaves rec UNCONFIRMED with the reason instead.
  absl::Status SubmitStep(ConfirmationRecord& rec, int step);
  // Reads the collection of a submitted step into it; returns why it
  // failed or was cancelled ("" otherwise).
  absl::StatusOr<std::string> RefreshStep(const std::string& team, v1::ConfirmationStep* step);
  // Judges the reruns: every baseline rerun's samples against every
  // candidate rerun's.
  absl::Status Evaluate(ConfirmationRecord& rec);
  void Finish(ConfirmationRecord& rec, v1::ConfirmationState state, const std::string& reason);
  int64_t NowMs() { return ToUnixMillis(clock_.SystemNow()); }

  Store& store_;
  Clock& clock_;
  Submit submit_;
};

}  // namespace npuperf::server
