// ComparisonQueries: which rounds to compare, read from the Store, judged by
// the comparator. Each request is checked here, in one place
// (INVALID_ARGUMENT naming the field); the query service only authenticates
// and maps statuses. Every choice of baseline and candidate lives here.
//
// Every comparison uses the team's measured noise of its cases (one
// Store::NoiseOfCases read per request; comparator.h VerdictOptions.noise).
//
// Thread-safe (stateless beyond the injected Store and Clock).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/compare/comparator.h"
#include "server/compare/confirmations.h"
#include "server/compare/triage_queries.h"
#include "server/store/store.h"

namespace npuperf::server {

class ComparisonQueries {
 public:
  // confirmations: what CompareCollections and ListRegressions with confirm
  // request them from (nullptr: such requests are FAILED_PRECONDITION).
  ComparisonQueries(Store& store, Clock& clock, Confirmations* confirmations = nullptr);

  // NOT_FOUND for a round of another team; INVALID_ARGUMENT naming the field.
  absl::StatusOr<v1::CompareRoundsResponse> CompareRounds(const std::string& team,
                                                          const v1::CompareRoundsRequest& req);
  absl::StatusOr<v1::CompareCollectionsResponse> CompareCollections(
      const std::string& team, const v1::CompareCollectionsRequest& req);
  // CompareCollections of one baseline against each candidate; every bad
  // field at once (candidate_collection_ids[i]); NOT_FOUND / FAILED_PRECONDITION
  // for the first absent or unfinished collection, named.
  absl::StatusOr<v1::CompareManyResponse> CompareMany(const std::string& team,
                                                      const v1::CompareManyRequest& req);
  // Two implementations of the same operators, paired (implementation_rules.h;
  // implementation_queries.cc): both collections the team's and finished
  // (NOT_FOUND / FAILED_PRECONDITION naming the field), the pairs checked
  // (INVALID_ARGUMENT), the answer at most kMaxImplementationBytes.
  absl::StatusOr<v1::CompareImplementationsResponse> CompareImplementations(
      const std::string& team, const v1::CompareImplementationsRequest& req);
  absl::StatusOr<v1::GetGoldenReportResponse> GetGoldenReport(
      const std::string& team, const v1::GetGoldenReportRequest& req);
  absl::StatusOr<v1::PinBaselineResponse> PinBaseline(const std::string& team,
                                                      const v1::PinBaselineRequest& req);
  // Against a pinned baseline it also tracks the regressions it finds
  // (TriageQueries::TrackListing: a read that writes their last sighting).
  absl::StatusOr<v1::ListRegressionsResponse> ListRegressions(
      const std::string& team, const v1::ListRegressionsRequest& req);
  // The triage of the regressions ListRegressions tracks.
  TriageQueries& triage() { return triage_; }
  // Confirmations::Request and Get; FAILED_PRECONDITION without them.
  absl::StatusOr<v1::RequestConfirmationResponse> RequestConfirmation(
      const std::string& team, const v1::RequestConfirmationRequest& req);
  absl::StatusOr<v1::GetConfirmationResponse> GetConfirmation(
      const std::string& team, const v1::GetConfirmationRequest& req);

  // ReadQueries::ListRounds, plus with req.changes the change points of each
  // case's series (change_points.h; change_queries.cc).
  absl::StatusOr<v1::ListRoundsResponse> ListRounds(const std::string& team,
                                                    const v1::ListRoundsRequest& req);

  // Every round of a collection (with evidence, without evidence_json).
  absl::StatusOr<std::vector<v1::Round>> CollectionRounds(const std::string& team,
                                                          const std::string& collection_id);

 private:
  // What ListRegressions compares, and against what.
  struct RegressionPairs {
    std::vector<v1::Round> baseline;
    std::vector<v1::Round> candidates;
    std::string description;
  };

  // The measured noise of the rounds' cases, in one store read (none when
  // the request set both thresholds, so nothing calibrated applies).
  absl::StatusOr<NoiseBook> NoiseOf(const std::string& team, const VerdictOptions& options,
                                    const std::vector<const std::vector<v1::Round>*>& rounds);

  // OK when the team's collection is terminal; FAILED_PRECONDITION while it
  // runs (pinning or comparing half a collection would mislead), NOT_FOUND
  // when absent. field names the request field in messages.
  absl::Status RequireFinished(const std::string& team, const std::string& collection_id,
                               const std::string& field);
  // Newest round per (operator, case) matching the filter.
  absl::StatusOr<std::vector<v1::Round>> NewestPerCase(RoundFilter filter);
  // The candidate collection, or the newest rounds per case from from_ms on.
  absl::StatusOr<std::vector<v1::Round>> RegressionCandidates(
      const std::string& team, const v1::ListRegressionsRequest& req, int64_t from_ms,
      const std::map<std::string, std::string>& labels);
  // The newest round before before_ms of each candidate's operator and case.
  absl::StatusOr<std::vector<v1::Round>> Predecessors(const std::string& team,
                                                      const std::vector<v1::Round>& candidates,
                                                      int64_t before_ms);
  // Against the pinned baseline of req.baseline_label.
  absl::Status PinnedPairs(const std::string& team, const v1::ListRegressionsRequest& req,
                           RegressionPairs* pairs);
  // The drifts of the candidates' cases (change_queries.cc): the newest
  // kDriftWindowRounds rounds of each (operator, case), for at most
  // kMaxDriftCases cases.
  absl::Status AddDrifts(const std::string& team, const std::vector<v1::Round>& candidates,
                         int64_t since_ms, const VerdictOptions& options,
                         v1::ListRegressionsResponse* resp);
  // With confirm: a confirmation of each of `comparisons` (REGRESSED or
  // IMPROVED ones; others are skipped), in order, the first
  // kMaxConfirmationsPerRequest of them requested; the rest are listed
  // UNCONFIRMED, not stored, saying so.
  absl::Status ConfirmEach(
      const std::string& team,
      const google::protobuf::RepeatedPtrField<v1::RoundComparison>& comparisons,
      const std::vector<v1::Round>& baseline, const std::vector<v1::Round>& candidates,
      const v1::CompareOptions& options, google::protobuf::RepeatedPtrField<v1::Confirmation>* out);
  // Against the newest rounds before req.since.
  absl::Status SincePairs(const std::string& team, const v1::ListRegressionsRequest& req,
                          RegressionPairs* pairs);

  Store& store_;
  Clock& clock_;
  Confirmations* confirmations_;
  TriageQueries triage_;
};

}  // namespace npuperf::server
