#include "server/core/canary_rules.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "evidence/op_summary.h"
#include "server/core/noise_rules.h"

namespace npuperf::server {
namespace {

std::vector<double> Positive(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) {
    if (std::isfinite(x) && x > 0) out.push_back(x);
  }
  return out;
}

}  // namespace

CanaryJudgement JudgeCanary(double kernel_us, const std::vector<double>& peers,
                            const std::vector<double>& history, std::optional<double> spread_pct,
                            const std::string& soc, bool clock_suspect) {
  CanaryJudgement j;
  const std::vector<double> p = Positive(peers), h = Positive(history);
  if (!(std::isfinite(kernel_us) && kernel_us > 0)) {
    j.reason = "canary has no kernel time";
    return j;
  }
  if (clock_suspect) {
    j.reason = "canary not judged: its DVFS check did not find the rated clock";
    return j;
  }
  if (static_cast<int>(p.size()) >= kMinCanaryPeers) {
    j.reference = "peers";
    j.reference_us = evidence::Median(p);
  } else if (!h.empty()) {
    j.reference = "history";
    j.reference_us = evidence::Median(h);
  } else {
    j.reason = absl::StrFormat("canary not judged: %d other %s devices (need %d) and no history",
                               p.size(), soc, kMinCanaryPeers);
    return j;
  }
  const double spread = spread_pct.value_or(kDefaultCanarySpreadPct);
  j.threshold_pct = std::max(kCanaryFloorPct, kNoiseK * spread);
  j.excess_pct = 100 * (kernel_us / j.reference_us - 1);
  j.verdict = j.excess_pct > j.threshold_pct ? CanaryVerdict::kSlow : CanaryVerdict::kPass;
  const std::string against =
      j.reference == "peers"
          ? absl::StrFormat("the median of %d other %s devices", p.size(), soc)
          : absl::StrFormat("this device's median of %d passing canaries", h.size());
  j.reason =
      absl::StrFormat("canary %.1f %% %s than %s (threshold %.3g %%%s)", std::fabs(j.excess_pct),
                      j.excess_pct >= 0 ? "slower" : "faster", against, j.threshold_pct,
                      spread_pct ? ", calibrated" : ", uncalibrated");
  return j;
}

CanaryAction NextCanaryAction(bool quarantined, CanaryVerdict v, CanaryStreak* streak) {
  switch (v) {
    case CanaryVerdict::kInconclusive: return CanaryAction::kNone;
    case CanaryVerdict::kSlow:
      ++streak->slow;
      streak->passed = 0;
      if (!quarantined && streak->slow >= kSlowCanariesToQuarantine)
        return CanaryAction::kQuarantine;
      return CanaryAction::kNone;
    case CanaryVerdict::kPass:
      ++streak->passed;
      streak->slow = 0;
      if (quarantined && streak->passed >= kPassingCanariesToRelease) return CanaryAction::kRelease;
      return CanaryAction::kNone;
  }
  return CanaryAction::kNone;
}

CanaryAction ActionFromHistory(bool quarantined, const std::vector<CanaryVerdict>& newest_first) {
  CanaryStreak streak;
  CanaryAction last = CanaryAction::kNone;
  for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) {
    last = NextCanaryAction(quarantined, *it, &streak);
  }
  return last;
}

bool CanaryQuarantineFits(int quarantined, int devices) {
  const int cap = std::max(1, static_cast<int>(kMaxCanaryQuarantineShare * devices));
  return quarantined + 1 <= cap;
}

}  // namespace npuperf::server
