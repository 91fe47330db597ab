#include "server/core/confirmation_rules.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npuperf::server {
namespace {

bool Terminal(v1::CollectionState s) {
  return s == v1::COLLECTION_STATE_SUCCEEDED || s == v1::COLLECTION_STATE_FAILED ||
         s == v1::COLLECTION_STATE_CANCELLED;
}

std::string VerdictName(v1::Verdict v) {
  std::string name = v1::Verdict_Name(v);
  constexpr absl::string_view kPrefix = "VERDICT_";
  if (absl::StartsWith(name, kPrefix)) name.erase(0, kPrefix.size());
  return name;
}

}  // namespace

bool Confirmable(v1::Verdict v) { return v == v1::VERDICT_REGRESSED || v == v1::VERDICT_IMPROVED; }

RerunDevice ChooseRerunDevice(const std::string& soc,
                              const std::vector<v1::DevicePlacement>& originals,
                              const std::vector<v1::AgentStatus>& agents) {
  auto original = [&](const std::string& host, int32_t id) {
    return std::any_of(originals.begin(), originals.end(), [&](const v1::DevicePlacement& o) {
      return o.host() == host && o.device_id() == id;
    });
  };
  auto original_host = [&](const std::string& host) {
    return std::any_of(originals.begin(), originals.end(),
                       [&](const v1::DevicePlacement& o) { return o.host() == host; });
  };
  // Lower is better: (same host as an original, busy, host, device id).
  using Rank = std::tuple<bool, bool, std::string, int32_t>;
  std::optional<Rank> best_rank;
  std::optional<v1::DevicePlacement> best;
  for (const v1::AgentStatus& a : agents) {
    if (a.state() != "online") continue;
    for (const v1::DeviceStatus& d : a.devices()) {
      if (d.soc() != soc || original(a.host(), d.device_id())) continue;
      if (d.state() != "idle" && d.state() != "busy") continue;  // unhealthy, locked, offline
      Rank rank{original_host(a.host()), d.state() != "idle", a.host(), d.device_id()};
      if (best_rank && !(rank < *best_rank)) continue;
      best_rank = rank;
      best.emplace();
      best->set_agent_id(a.agent_id());
      best->set_host(a.host());
      best->set_device_id(d.device_id());
      best->set_soc(d.soc());
    }
  }
  if (best) return {best, ""};
  std::vector<std::string> used;
  for (const v1::DevicePlacement& o : originals) {
    used.push_back(absl::StrCat(o.host(), " device ", o.device_id()));
  }
  return {std::nullopt, absl::StrCat("no online device of SoC ", soc, " other than ",
                                     absl::StrJoin(used, " and "), " can rerun it")};
}

std::vector<v1::ConfirmationStep> RerunSteps(int pairs) {
  std::vector<v1::ConfirmationStep> steps;
  for (int i = 0; i < 2 * pairs; ++i) {
    steps.emplace_back().set_side(i % 2 == 0 ? kBaselineSide : kCandidateSide);
  }
  return steps;
}

ConfirmationMove NextConfirmationMove(const v1::Confirmation& c) {
  for (int i = 0; i < c.steps_size(); ++i) {
    const v1::ConfirmationStep& s = c.steps(i);
    if (s.collection_id().empty()) return {ConfirmationMove::kSubmit, i};
    if (!Terminal(s.state())) return {ConfirmationMove::kWait, i};
    if (s.state() != v1::COLLECTION_STATE_SUCCEEDED) return {ConfirmationMove::kGiveUp, i};
  }
  return {ConfirmationMove::kEvaluate, 0};
}

std::string StepName(const v1::Confirmation& c, int step) {
  const int pairs = c.steps_size() / 2;
  return absl::StrCat(c.steps(step).side(), " rerun ", step / 2 + 1, " of ", pairs);
}

ConfirmationOutcome DecideConfirmation(v1::Verdict original, const v1::RoundComparison& rerun) {
  const std::string got = absl::StrCat(VerdictName(rerun.verdict()), " (", rerun.rule(), ")");
  if (rerun.verdict() == original) {
    return {v1::CONFIRMATION_STATE_CONFIRMED, absl::StrCat("the reruns gave ", got, " again")};
  }
  if (rerun.verdict() == v1::VERDICT_STABLE || Confirmable(rerun.verdict())) {
    return {v1::CONFIRMATION_STATE_NOT_CONFIRMED,
            absl::StrCat("the reruns gave ", got, ", not ", VerdictName(original))};
  }
  return {v1::CONFIRMATION_STATE_UNCONFIRMED, absl::StrCat("the reruns gave no verdict: ", got)};
}

bool ConfirmationTerminal(v1::ConfirmationState s) {
  return s == v1::CONFIRMATION_STATE_CONFIRMED || s == v1::CONFIRMATION_STATE_NOT_CONFIRMED ||
         s == v1::CONFIRMATION_STATE_UNCONFIRMED;
}

}  // namespace npuperf::server
