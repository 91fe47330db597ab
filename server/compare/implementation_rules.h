// Implementation rules: two implementations of the same operators (e.g.
// PyPTO against Ascend C) in two collections, paired by an operator mapping
// and case id, judged in two scopes (docs/comparisons.md, "Implementations").
//
// Pure functions over stored rounds (no store, no gRPC, no clock), like
// comparator.h, whose CompareRounds they reuse for each pair of rounds: the
// same fingerprint rules (the expected differences between implementations —
// operator_name, op_name, bundle_sha256, block_num, argv — are informative;
// soc, cann_version, mode, seed ... block) and the same Task Duration verdict.
//
// Per case, in this order:
//   MISSING_CANDIDATE / MISSING_BASE  the case is on one side only
//   ERRORED         a side has evidence errors or no positive samples
//   SHAPE_MISMATCH  case_shape, case_dtype, input_shapes or input_data_types
//                   differ (when both sides know them): listed, never compared
//   NOT_COMPARABLE  another blocking fingerprint field differs
//   COMPARED        both scopes: "task_duration" (the duration samples, one
//                   per repeat: Mann-Whitney verdict and Hodges-Lehmann CI as
//                   in compare) and "core" (each side's primary core time,
//                   max(aicore_time, aiv_time) of each repeat from
//                   duration.core_samples_us: their medians, Mann-Whitney and
//                   the Hodges-Lehmann CI; a round without them, e.g. stored
//                   before they existed, gives its merged figure: a ratio
//                   without a test, INSUFFICIENT)
// Per operator: the scenario count and the geometric mean of its cases'
// ratios per scope. Over operators: the arithmetic mean (what the release
// report prints as its average) and the geometric mean, both labelled.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "npuperf/v1/comparison.pb.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/compare/comparator.h"

namespace npuperf::server {

// Labels of the two means over operators.
inline constexpr char kArithmeticMeanLabel[] =
    "arithmetic mean of operator ratios (the release report's average)";
inline constexpr char kGeometricMeanLabel[] = "geometric mean of operator ratios";

// The explicit pairs of a request: `pairs` then the lines of `pair_map`
// (CAND_OP=BASE_OP; blank lines and '#' comments skipped; spaces around
// names trimmed). INVALID_ARGUMENT naming each bad field ("pairs[2].
// base_operator", "pair_map" with "line 7: ...", at most 20 of them): a name
// that is not an operator name ([A-Za-z0-9_.-], 1..128 bytes), a line
// without '=', a candidate operator paired twice, more than
// kMaxImplementationPairs pairs in all, a pair map over kMaxPairMapBytes.
absl::StatusOr<std::vector<v1::OperatorPair>> RequestedPairs(
    const v1::CompareImplementationsRequest& req);

// The pairs to compare, sorted by candidate operator: the explicit pairs
// whose two operators have rounds (an explicit pair naming an operator
// without rounds is listed in *unpaired with the reason); without explicit
// pairs, every operator with a namesake on the other side. Unless both sides
// are one collection (both implementations in one batch: the operators of
// no pair are simply the rest of it), the operators of either side left
// without a pair are listed too.
std::vector<v1::OperatorPair> ResolvePairs(
    const std::vector<v1::OperatorPair>& explicit_pairs, const std::vector<v1::Round>& base,
    const std::vector<v1::Round>& candidate, bool same_collection,
    google::protobuf::RepeatedPtrField<v1::UnpairedOperator>* unpaired);

// The whole comparison (everything but the collection ids): every case of
// every pair (the newest round of an operator and case on each side), the
// operators, the two means and the counts of the bot contract.
v1::CompareImplementationsResponse CompareImplementationSets(
    const std::vector<v1::Round>& base, const std::vector<v1::Round>& candidate,
    const std::vector<v1::OperatorPair>& explicit_pairs, bool same_collection,
    const VerdictOptions& options);

// One case of a pair of rounds (statuses ERRORED .. COMPARED above).
v1::ImplementationCase CompareImplementationCase(const v1::Round& base, const v1::Round& candidate,
                                                 const VerdictOptions& options);

// A scope judged on its samples (each > 0, finite) and aggregates:
// ratio = candidate_us / base_us, Mann-Whitney p and the Hodges-Lehmann
// interval (verdict_stats.h), INSUFFICIENT when the sample sizes cannot reach
// alpha, else STABLE / IMPROVED / REGRESSED by p and the duration threshold.
// `why_few` is added to the INSUFFICIENT rule (e.g. the core time is one
// figure per round).
v1::ScopeComparison JudgeScope(const std::string& scope, const std::vector<double>& base_samples,
                               const std::vector<double>& candidate_samples, double base_us,
                               double candidate_us, const VerdictOptions& options,
                               absl::string_view why_few);

// Arithmetic mean of the values; 0 for none.
double ArithmeticMean(const std::vector<double>& values);

// OK when the serialized response is at most max_bytes; RESOURCE_EXHAUSTED
// saying how large it is otherwise (compare fewer operators per call).
absl::Status CheckImplementationResponseSize(const v1::CompareImplementationsResponse& resp,
                                             size_t max_bytes);

}  // namespace npuperf::server
