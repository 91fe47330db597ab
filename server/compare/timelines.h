// Timelines: the supplemental instruction profile of formal rounds
// (CollectionService.SubmitTimeline; reference-scripts.md §2.10, §5.7;
// docs/evidence.md "Timeline").
//
// A timeline is an ordinary one-job collection in PROFILE_MODE_TIMELINE,
// submitted through the scheduler (priority, quotas, leases, fencing and
// retries apply as to any job) with the formal round's bundle, target,
// manifest record, launch selector, seed and warm-up, pinned to the host and
// device the round ran on, and carrying the server label
// npuperf.timeline_of=<round id>: its round is found by that label, stays
// out of series, comparisons and regressions, and its durations never stand
// beside the formal round's (the agent reports none). The round must be
// formal (standard or compare mode) and its device offered by an online
// agent now; everything is checked before anything is queued.
//
// A Tile-DAG attestation the user gives (checked against each round's
// target) goes with each timeline's spec; when the timeline is stored the
// server decides from it, the timeline and the formal round's roofline
// whether the round may be closed (evidence::DecideCompletion).
//
// Idempotent per round and generation: the n-th timeline of a round is
// submitted with the key npuperf-timeline-<round>-<n>, so two replicas (or a
// client's retry) asking at once queue one job, and asking again while one
// is queued or running returns it.
//
// Thread-safe (stateless beyond the injected Store and functions).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuperf/v1/collection_service.pb.h"
#include "server/core/scheduler.h"
#include "server/store/store.h"

namespace npuperf::server {

class Timelines {
 public:
  Timelines(Store& store, ServerSubmit submit, ServerCancel cancel);

  // INVALID_ARGUMENT naming the field; NOT_FOUND for a round or collection
  // of another team, or a case with no round (naming case_ids[i]);
  // FAILED_PRECONDITION naming what cannot match (a round that is not formal,
  // a device no agent offers now). When a submission fails after others of
  // the same request were queued, those are cancelled again.
  absl::StatusOr<v1::SubmitTimelineResponse> Submit(const std::string& team,
                                                    const v1::SubmitTimelineRequest& req);

 private:
  // The rounds a request names (each checked formal), in request order; the
  // spec of a collection it read goes into *formal (by id).
  absl::StatusOr<std::vector<v1::Round>> ResolveRounds(
      const std::string& team, const v1::SubmitTimelineRequest& req,
      std::map<std::string, v1::CollectionSpec>* formal);
  // The timeline collection of one formal round; the run it queued (or the
  // one queued or running already).
  absl::StatusOr<v1::TimelineRun> SubmitOne(const std::string& team, const v1::Round& round,
                                            const v1::CollectionSpec& timeline_spec);

  Store& store_;
  ServerSubmit submit_;
  ServerCancel cancel_;
};

// The timeline collection's spec for formal round `round` of collection
// `formal`: the round's operator alone, with its case, bundle, runner,
// target, manifest path and launch selector; the case selector, seed,
// warm-up, retry, timeout, priority and user labels of `formal`; one repeat
// with the raw output kept; pinned to the round's SoC, host and device.
// FAILED_PRECONDITION naming the field when the round cannot be matched
// (its operator is not in the spec, it ran on no known device). Pure.
absl::StatusOr<v1::CollectionSpec> TimelineSpecFor(const v1::Round& round,
                                                   const v1::CollectionSpec& formal);

}  // namespace npuperf::server
