#include "server/core/artifact_rules.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/duration_text.h"

namespace npuperf::server {
namespace {

constexpr char kFlag[] = "--artifact-retention-team";
constexpr int64_t kMaxQuotaMib = int64_t{1} << 30;

absl::Status Bad(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(kFlag, " ", text, ": ", why, " (want TEAM=AGE[,QUOTA_MIB])"));
}

}  // namespace

absl::StatusOr<TeamArtifactPolicy> ParseTeamArtifactPolicy(absl::string_view text) {
  const size_t eq = text.find('=');
  if (eq == absl::string_view::npos) return Bad(text, "no '='");
  TeamArtifactPolicy p;
  p.team = std::string(text.substr(0, eq));
  if (p.team.empty()) return Bad(text, "empty team");
  absl::string_view rest = text.substr(eq + 1);
  const size_t comma = rest.find(',');
  const absl::string_view age = rest.substr(0, comma);
  if (age != "never") {
    auto d = ParseDurationText(age);
    if (!d.ok()) return Bad(text, d.status().message());
    if (d->count() <= 0) return Bad(text, "the age must be positive (or never)");
    p.retention = *d;
  }
  if (comma != absl::string_view::npos) {
    int64_t mib = 0;
    const absl::string_view quota = rest.substr(comma + 1);
    if (!absl::SimpleAtoi(quota, &mib) || mib < 0 || mib > kMaxQuotaMib) {
      return Bad(text, absl::StrCat("QUOTA_MIB must be in 0..", kMaxQuotaMib));
    }
    p.quota_bytes = mib << 20;
  }
  return p;
}

absl::StatusOr<std::map<std::string, TeamArtifactPolicy>> ParseTeamArtifactPolicies(
    const std::vector<std::string>& flags) {
  std::map<std::string, TeamArtifactPolicy> out;
  for (const std::string& f : flags) {
    auto p = ParseTeamArtifactPolicy(f);
    if (!p.ok()) return p.status();
    if (out.count(p->team) > 0) return Bad(f, absl::StrCat("team ", p->team, " named twice"));
    out[p->team] = *std::move(p);
  }
  return out;
}

std::vector<ArtifactSweepPass> PlanArtifactSweep(
    std::chrono::milliseconds default_retention,
    const std::map<std::string, TeamArtifactPolicy>& teams, int64_t now_ms) {
  std::vector<ArtifactSweepPass> out;
  ArtifactSweepPass others;
  for (const auto& [team, p] : teams) {
    others.scope.except.push_back(team);
    if (p.retention.count() <= 0) continue;
    ArtifactSweepPass pass;
    pass.created_before_ms = now_ms - p.retention.count();
    pass.scope.team = team;
    out.push_back(std::move(pass));
  }
  if (default_retention.count() > 0) {
    others.created_before_ms = now_ms - default_retention.count();
    out.push_back(std::move(others));
  }
  return out;
}

std::map<std::string, int64_t> TeamArtifactQuotas(
    const std::map<std::string, TeamArtifactPolicy>& teams) {
  std::map<std::string, int64_t> out;
  for (const auto& [team, p] : teams) {
    if (p.quota_bytes) out[team] = *p.quota_bytes;
  }
  return out;
}

}  // namespace npuperf::server
