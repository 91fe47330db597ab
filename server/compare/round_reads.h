// The store reads the comparison rooms share (comparison queries,
// confirmations, calibrations): every round of a collection, and the
// measured noise of the cases a comparison judges. One definition each, so
// that a verdict reads its rounds and thresholds the same way wherever it is
// drawn.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/compare/comparator.h"
#include "server/store/store.h"

namespace npuperf::server {

// Every round of the team's collection (with evidence, without
// evidence_json), in id order, read kComparisonPage at a time. Rounds of
// server collections are included (the collection is named).
absl::StatusOr<std::vector<v1::Round>> RoundsOfCollection(Store& store, const std::string& team,
                                                          const std::string& collection_id);

// The newest measured spreads of the cases (CaseKey) for team
// (Store::NoiseOfCases), as the comparator reads them; empty without a read
// when the request set both thresholds (then no spread applies).
absl::StatusOr<NoiseBook> NoiseOfCases(Store& store, const std::string& team,
                                       const std::set<std::string>& case_keys,
                                       const VerdictOptions& options);

}  // namespace npuperf::server
