#pragma once

#include <filesystem>

#include "evidence/discovery.h"
#include "npuperf/v1/collection.pb.h"

namespace npuperf::agent {

// A discovery job's candidate table as the agent reports it
// (npuperf.v1.DiscoveryResult), kept within the bounds the server enforces
// (common/input_rules.h): the first kMaxDiscoveryCandidates candidates whose
// name is printable and at most kMaxDiscoveryOpNameBytes (others are counted
// in candidates_left_off: a name cut short would be a wrong name), the first
// kMaxDiscoveryLaunches launches of each, the first kMaxDiscoveryNotes notes;
// other texts have control bytes replaced by '?' and are cut at their limit.
// The source is made relative to session_dir. Pure; thread-safe.
v1::DiscoveryResult DiscoveryReport(const evidence::Discovery& found,
                                    const std::filesystem::path& session_dir);

}  // namespace npuperf::agent
