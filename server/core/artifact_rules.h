// Per-team artifact retention (--artifact-retention-team TEAM=AGE[,QUOTA_MIB]),
// as pure decisions: what the flag says, and which sweep passes a retention
// run makes. Why a pass per team with a retention of its own, plus one pass
// over every other team: each pass has one cutoff, so the store's sweep stays
// one indexed statement per batch, and a team's override can only lengthen
// or shorten its own retention, never another team's. Pinned baselines are
// never swept whatever the pass (Store::SweepArtifacts). Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/store/records.h"

namespace npuperf::server {

// One team's override of --artifact-retention and --artifact-quota-mib.
struct TeamArtifactPolicy {
  std::string team;
  // 0: kept until deleted by hand ("never").
  std::chrono::milliseconds retention{0};
  // Bytes the team may store; nullopt: the global quota; 0: none.
  std::optional<int64_t> quota_bytes;
};

// Parses "TEAM=AGE[,QUOTA_MIB]": AGE is <n>s|m|h|d or never, QUOTA_MIB 0..2^30
// (0: no quota). INVALID_ARGUMENT naming --artifact-retention-team and the
// value otherwise (an empty team, a bad age or quota).
absl::StatusOr<TeamArtifactPolicy> ParseTeamArtifactPolicy(absl::string_view text);

// Several flags into one map; a team named twice is INVALID_ARGUMENT.
absl::StatusOr<std::map<std::string, TeamArtifactPolicy>> ParseTeamArtifactPolicies(
    const std::vector<std::string>& flags);

// One SweepArtifacts pass: its cutoff and the teams it covers.
struct ArtifactSweepPass {
  int64_t created_before_ms = 0;
  ArtifactSweepScope scope;
};

// The passes of one retention run at now_ms: one per team with a retention
// of its own (none for a team that keeps its artifacts), then one over every
// other team with the default retention (none when it is 0).
std::vector<ArtifactSweepPass> PlanArtifactSweep(
    std::chrono::milliseconds default_retention,
    const std::map<std::string, TeamArtifactPolicy>& teams, int64_t now_ms);

// The per-team quotas of NewArtifact::team_quota_bytes.
std::map<std::string, int64_t> TeamArtifactQuotas(
    const std::map<std::string, TeamArtifactPolicy>& teams);

}  // namespace npuperf::server
