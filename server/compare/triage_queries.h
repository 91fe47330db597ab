// TriageQueries: the regressions a team tracks (docs/comparisons.md,
// "Triage"). ListRegressions hands it what a listing against a pinned
// baseline found (TrackListing); TriageRegression and GetRegression check
// their requests here (INVALID_ARGUMENT naming the field) and the Store
// does the compare-and-set. core/triage_rules.h has the rules.
//
// Thread-safe (stateless beyond the injected Store and Clock).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/store/store.h"

namespace npuperf::server {

// The message of a stored regression.
v1::Regression RegressionToProto(const RegressionRecord& r);

class TriageQueries {
 public:
  TriageQueries(Store& store, Clock& clock);

  // NOT_FOUND for another team's regression; FAILED_PRECONDITION naming the
  // current state for a stale expected_state or an illegal move.
  absl::StatusOr<v1::TriageRegressionResponse> TriageRegression(
      const std::string& team, const v1::TriageRegressionRequest& req);
  absl::StatusOr<v1::GetRegressionResponse> GetRegression(const std::string& team,
                                                          const v1::GetRegressionRequest& req);

  // Fills resp's regressions, tracked, hidden_closed and precision from the
  // comparisons of a listing. With a baseline_label, every comparison whose
  // candidate round carries that label is observed (REGRESSED opens or
  // touches its regression; STABLE or IMPROVED closes it); closed ones are
  // left out unless req.include_closed. Without one (since), nothing is
  // tracked: every regressed case is listed, tracked stays empty.
  absl::Status TrackListing(const std::string& team, const v1::ListRegressionsRequest& req,
                            const std::vector<v1::Round>& candidates,
                            v1::CompareCollectionsResponse& all, v1::ListRegressionsResponse* resp);

  // Per rule of kRegressionRules, the team's precision (team empty: every
  // team's).
  absl::StatusOr<std::vector<v1::RegressionPrecision>> Precision(const std::string& team);

 private:
  Store& store_;
  Clock& clock_;
};

}  // namespace npuperf::server
