#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/collection_service.pb.h"
#include "npuperf/v1/comparison.pb.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::client {

// Text and JSON rendering of API messages for the CLI. JSON is the proto3
// JSON mapping with the .proto field names (snake_case), the documented bot
// schema.

std::string ToJson(const google::protobuf::Message& m);

// The same text as ToJson(const Message&), with the jobs printed a thousand
// at a time: protobuf's printer builds a tree of every field's default value
// for the whole message first, which for a 100,000-job collection took about
// 6 s and 900 MB in the CLI, and printing job by job paid its per-message
// type resolution 100,000 times (issue 36).
std::string ToJson(const v1::Collection& c);

// The elements of the top-level array `field` in object_json (ToJson of a
// message with that field set), as printed: the text between its brackets,
// at the printer's indentation. nullopt when the field is not found as a
// non-empty array at the top.
std::optional<std::string_view> JsonArrayBody(std::string_view object_json, std::string_view field);

// object_json (ToJson of a message whose repeated field `field` is empty)
// with that field's array holding `bodies` (JsonArrayBody texts) in order;
// nullopt when the empty field is not found at the top.
std::optional<std::string> SpliceJsonArray(std::string_view object_json, std::string_view field,
                                           const std::vector<std::string_view>& bodies);

// The error object of --format json (docs/api.md): {"schema":
// "npuperf.error.v1", "exit_code", "error": {"code": "NOT_FOUND",
// "code_number": 5, "message", "field_violations": [{"field",
// "description"}]}}, pretty-printed.
std::string ErrorJson(const absl::Status& s, int exit_code);

// One line per job: operator/case, state, kernel time or reason.
void PrintCollection(const v1::Collection& c, std::ostream& out);
void PrintCollectionList(const v1::ListCollectionsResponse& list, std::ostream& out);
void PrintRound(const v1::Round& r, std::ostream& out);
void PrintRounds(const v1::ListRoundsResponse& rounds, std::ostream& out);
// The change points of a ListRounds answer, one line each (or "no change
// points").
void PrintSeriesChanges(const v1::ListRoundsResponse& rounds, std::ostream& out);
void PrintAgents(const v1::ListAgentsResponse& agents, std::ostream& out);
// `npuperf report <collection>`: one row per round (kernel time, samples,
// bound, per-core balance, DVFS, golden reference ratio); Markdown when md.
void PrintRoundsReport(const std::string& collection_id, const v1::ListRoundsResponse& rounds,
                       bool md, std::ostream& out);

// Verdicts (compare, regressions): "REGRESSED" for VERDICT_REGRESSED.
std::string VerdictName(v1::Verdict v);
// "1.080 [1.050, 1.110]" (the CI only when computable), "-" without a ratio.
std::string RatioText(const v1::DurationComparison& d);
// "1 regressed, 2 improved, 3 stable / 6 comparable of 6 matched (0
// insufficient, 0 not comparable, 0 errored, 0 unmatched)": the denominators.
std::string CountsSummary(const v1::ComparisonCounts& n);
// "add/p1", or "add" without a case id.
std::string CaseLabel(const v1::RoundComparison& c);

// "running 3/8 (succeeded 2, failed 0) job 12 metric 4/7 Memory"
std::string ProgressLine(const v1::Collection& c, const v1::Job* changed);

// "[#########-----------]" of finished jobs over all, `width` cells wide.
std::string ProgressBar(const v1::JobCounts& counts, int width);

// Lower-case names without the enum prefix: "succeeded", "metric_run".
std::string StateName(v1::JobState s);
std::string StateName(v1::CollectionState s);
std::string PhaseName(v1::JobPhase p);

}  // namespace npuperf::client
