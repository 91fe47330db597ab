#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "npuperf/v1/collection.pb.h"
#include "server/store/records.h"

namespace npuperf::server {

// History-aware placement (issue 18), as pure functions: a collection's jobs
// are queued longest first, so the longest start first and the last device
// to finish is not the one that started the longest job late (LPT order:
// makespan <= 4/3 of the optimum, and far less skew than manifest order).
//
// How it works with the rest of the scheduler: every backend leases a
// collection's queued job with the lowest id first (Store::ClaimJob), and
// ids follow the insertion order, so ordering NewCollection::jobs before the
// insert is the whole mechanism. Collections still take turns by priority
// and age (core/assignment.h); only the order inside a collection changes.
// Jobs are listed by id, i.e. in the order they are offered.

// What a job's device time depends on, hashed (32 hex): the team, the
// operator's name, runner, manifest and launch selectors, the case, the
// target kernel, the profiling parameters (mode, repeats, warm-ups, metric
// groups, timeouts) and the device constraints (SoC). Not the bundle's hash:
// a new revision of the same operator usually runs about as long as the
// last, and history must carry over an optimisation round.
std::string DurationKey(const std::string& team, const v1::CollectionSpec& spec,
                        const v1::OperatorSpec& op, const NewJob& job);

// Sets every job's duration_key (jobs as ExpandJobs made them from spec).
void SetDurationKeys(const std::string& team, const v1::CollectionSpec& spec,
                     std::vector<NewJob>* jobs);

// How many past runs of one key the estimate uses (the newest), and what it
// takes of them: the median, so one slow outlier (a retry, a cold cache)
// does not reorder the next collection.
inline constexpr int kDurationHistory = 5;
std::optional<int64_t> ExpectedRunMs(std::vector<int64_t> recent_run_ms);

// The jobs in placement order: jobs with no history first, in manifest order
// (their length is unknown; starting them early bounds the damage if one is
// long, and their first run gives the history), then jobs with history,
// longest expected first; equal estimates keep manifest order. expected_ms
// maps a duration key to its estimate.
std::vector<NewJob> LongestFirst(std::vector<NewJob> jobs,
                                 const std::map<std::string, int64_t>& expected_ms);

}  // namespace npuperf::server
