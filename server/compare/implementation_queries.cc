// ComparisonQueries::CompareImplementations: the reads and request checks of
// an implementation comparison; the rules are implementation_rules.h.
#include <utility>

#include "common/status_util.h"
#include "server/compare/comparison_queries.h"
#include "server/compare/implementation_rules.h"
#include "server/core/limits.h"

namespace npuperf::server {

absl::StatusOr<v1::CompareImplementationsResponse> ComparisonQueries::CompareImplementations(
    const std::string& team, const v1::CompareImplementationsRequest& req) {
  std::vector<FieldViolation> bad;
  if (req.base_collection_id().empty()) bad.push_back({"base_collection_id", "required"});
  if (req.candidate_collection_id().empty()) bad.push_back({"candidate_collection_id", "required"});
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  auto options = ResolveVerdictOptions(req.options());
  if (!options.ok()) return options.status();
  auto pairs = RequestedPairs(req);
  if (!pairs.ok()) return pairs.status();
  const bool same = req.base_collection_id() == req.candidate_collection_id();
  if (same && pairs->empty()) {
    return InvalidArgumentWithFields(
        {{"pairs", "a collection compared with itself needs pairs (CAND_OP=BASE_OP)"}});
  }
  for (const auto& [field, id] : {std::pair{"base_collection_id", &req.base_collection_id()},
                                  {"candidate_collection_id", &req.candidate_collection_id()}}) {
    if (absl::Status s = RequireFinished(team, *id, field); !s.ok()) return s;
  }
  auto base = CollectionRounds(team, req.base_collection_id());
  if (!base.ok()) return base.status();
  auto candidate = same ? base : CollectionRounds(team, req.candidate_collection_id());
  if (!candidate.ok()) return candidate.status();
  // Two operators never share a case key, so no measured spread applies: the
  // thresholds are the request's or the defaults.
  v1::CompareImplementationsResponse resp =
      CompareImplementationSets(*base, *candidate, *pairs, same, *options);
  resp.set_base_collection_id(req.base_collection_id());
  resp.set_candidate_collection_id(req.candidate_collection_id());
  if (absl::Status s = CheckImplementationResponseSize(resp, kMaxImplementationBytes); !s.ok()) {
    return s;
  }
  return resp;
}

}  // namespace npuperf::server
