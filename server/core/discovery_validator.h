#pragma once

#include <vector>

#include "common/status_util.h"
#include "npuperf/v1/collection.pb.h"

namespace npuperf::server {

// The check of a discovery job's candidate table at ingest (docs/api.md
// "Limits", docs/security.md "Evidence at ingest"): the scheduler calls it on
// every succeeded ReportResult that carries a DiscoveryResult, before either
// store backend sees it, so nothing it refuses is stored. The bounds are
// common/input_rules.h's (the agent keeps under them): 1 to
// kMaxDiscoveryCandidates candidates, kMaxDiscoveryLaunches launches each,
// kMaxDiscoveryNotes notes; every text printable and within its byte limit
// (op_name 1..1024, task_type 64, op_type 256, incidental 256, source and
// each note 1024); counts >= 1 and at least the launches shown; every number
// finite, durations >= 0, launch indexes >= 1. Pure; thread-safe.
//
// Returns one violation per bad field, named from the request
// ("discovery.candidates[3].op_name": "at most 1024 bytes"), at most 100.
std::vector<FieldViolation> ValidateDiscovery(const v1::DiscoveryResult& discovery);

}  // namespace npuperf::server
