// `npuperf timeline`: the supplemental instruction profile of formal rounds
// through the service (CollectionService.SubmitTimeline; docs/evidence.md
// "Timeline"):
//
//   npuperf timeline ROUND... | COLLECTION [--case ID]... [--tile-dag-attestation FILE]
//                    [--wait] [--timeout D]
//
// Queues one timeline job per round (pinned to the round's device, with its
// target, bundle, seed and warm-up) and prints each run's collection. With
// --wait it follows them to the end and prints each timeline: its round,
// attribution, lanes, same-lane overlap and pipeline evidence status (never
// "proven" by itself), and whether the formal round may be closed: the
// §2.11 rule over its roofline, the timeline and the Tile-DAG attestation the
// user gives (--tile-dag-attestation: the JSON file, sent as text, kept with
// its sha256), with every unmet condition.
//
// Exit codes: 0 queued (or, with --wait, every timeline found its target
// window exactly once); 1 refused (FAILED_PRECONDITION: a round that is not
// formal, a device no agent offers) or a timeline job failed; 2 usage; 4
// still running past --timeout; 5 unavailable; 6 not found.
#pragma once

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "client/commands.h"

namespace npuperf::client {

struct TimelineJobArgs {
  // Round ids (digits), or one collection id.
  std::vector<std::string> targets;
  std::vector<std::string> case_ids;  // with a collection
  std::string tile_dag_attestation;   // a file path; empty: none
  bool wait = false;
  std::chrono::seconds timeout{2 * 3600};
};

int RunTimelineJob(Session& s, const TimelineJobArgs& args, std::ostream& out, std::ostream& err);

}  // namespace npuperf::client
