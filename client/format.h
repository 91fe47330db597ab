#pragma once

#include <ostream>
#include <string>

#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/collection_service.pb.h"
#include "npuperf/v1/comparison.pb.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::client {

// Text and JSON rendering of API messages for the CLI. JSON is the proto3
// JSON mapping (field names in lowerCamelCase), the documented bot schema.

std::string ToJson(const google::protobuf::Message& m);

// One line per job: operator/case, state, kernel time or reason.
void PrintCollection(const v1::Collection& c, std::ostream& out);
void PrintCollectionList(const v1::ListCollectionsResponse& list, std::ostream& out);
void PrintRound(const v1::Round& r, std::ostream& out);
void PrintRounds(const v1::ListRoundsResponse& rounds, std::ostream& out);
void PrintAgents(const v1::ListAgentsResponse& agents, std::ostream& out);
// `npuperf report <collection>`: one row per round (kernel time, samples,
// bound, per-core balance, DVFS, golden reference ratio); Markdown when md.
void PrintRoundsReport(const std::string& collection_id, const v1::ListRoundsResponse& rounds,
                       bool md, std::ostream& out);

// "running 3/8 (succeeded 2, failed 0) job 12 metric 4/7 Memory"
std::string ProgressLine(const v1::Collection& c, const v1::Job* changed);

// "[#########-----------]" of finished jobs over all, `width` cells wide.
std::string ProgressBar(const v1::JobCounts& counts, int width);

// Lower-case names without the enum prefix: "succeeded", "metric_run".
std::string StateName(v1::JobState s);
std::string StateName(v1::CollectionState s);
std::string PhaseName(v1::JobPhase p);

}  // namespace npuperf::client
