// What `npuperf compare-impl` and `npuperf release-report` print, and the
// release report they build (docs/comparisons.md "Implementations",
// docs/reports.md "Release report"). Pure functions of the server's
// messages and of the text of the files the commands read; no I/O.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "client/ci_format.h"
#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::client {

// The group operators of no line of the groups file belong to.
inline constexpr char kUngrouped[] = "ungrouped";

// --pair CAND_OP=BASE_OP. INVALID_ARGUMENT naming the flag when a side is
// empty or '=' is missing (the server checks the names).
absl::StatusOr<v1::OperatorPair> ParsePairFlag(const std::string& text);

// A groups file: one OPERATOR=GROUP per line; blank lines and '#' comments
// skipped, spaces around names trimmed. INVALID_ARGUMENT naming the line for
// a line without '=', an empty side, or an operator given twice. In file
// order.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseGroups(
    const std::string& text);

// The release report of `collections` (each with every job) and their
// rounds (any order; the evidence of each job's round_id): an operator
// passes when every job of it SUCCEEDED and its round carries no evidence
// errors; when several collections hold an operator, the last one counts.
// Groups in the groups file's order (only those with operators), then
// kUngrouped; operators by group, then name. `implementations` is left empty.
v1::ReleaseReport BuildReleaseReport(
    const std::vector<v1::Collection>& collections, const std::vector<v1::Round>& rounds,
    const std::vector<std::pair<std::string, std::string>>& groups);

// compare-impl as text: the operator table with the two means, the
// compared cases with both scopes, the cases and operators not compared.
std::string ImplementationText(const v1::CompareImplementationsResponse& r);

// The operator table as Markdown (the release report's table: operator,
// scenarios, the two ratios; then the two means), and what was not
// compared. `title` is the headline.
std::string ImplementationMarkdown(const std::string& title,
                                   const v1::CompareImplementationsResponse& r);

// The cases as compare's VerdictReport (ci_format.h), for JUnit: each
// compared case a RoundComparison of its Task Duration scope (the core ratio
// in the rule), ERRORED / NOT_COMPARABLE ones (shape mismatches too) with
// their reason, missing cases and unpaired operators as unmatched.
VerdictReport ImplementationVerdicts(const std::string& title,
                                     const v1::CompareImplementationsResponse& r);

// The release report as Markdown: the group table (model group, operators,
// pass rate; then the total), the operators that did not pass, and each
// implementation table.
std::string ReleaseMarkdown(const std::string& title, const v1::ReleaseReport& r);

}  // namespace npuperf::client
