#pragma once
// The canary decisions (docs/operations.md, "Device health"), as pure
// functions: whether one device's canary was slow, and when slow canaries
// quarantine a device and passing ones release it.
//
// Why these rules:
// - A canary is the same small reference job on every device of a SoC. A
//   device is judged against the median of the same SoC's other devices'
//   latest canaries (the fleet moves together with a driver or CANN update,
//   so a shared slowdown is not a sick chip), and, while it has too few
//   peers, against the median of its own recent passing canaries.
// - The threshold is max(kCanaryFloorPct, kNoiseK x spread), the spread being
//   the canary case's measured A/A noise (core/noise_rules.h) or
//   kDefaultCanarySpreadPct while uncalibrated: a quiet SoC catches a 15 %
//   slow chip at once, a noisy one does not raise false quarantines.
// - One slow canary is a suspicion, kSlowCanariesToQuarantine in a row a
//   quarantine: a single unlucky run (a DVFS dip, a busy host) must not take
//   a device out of service. Release needs kPassingCanariesToRelease passes
//   in a row, so a chip that is slow every other run stays out.
// - At most a quarter of a SoC's devices (kMaxCanaryQuarantineShare, at
//   least one) are quarantined by canaries at once: the peers' median is
//   only as honest as the agents that reported it, and an impostor agent
//   registering many fast devices must not take a fleet out of service
//   (a real slowdown of more than a quarter of a SoC is a fleet problem for
//   people, which the canaries' listing shows).
// - Too little to compare with (no peer and no history), or a canary whose
//   own evidence says the clock was not the rated one (its DVFS check), is
//   INCONCLUSIVE and changes no streak: a down-clocked run says nothing about
//   the chip's speed at its clock, and npu-smi's reading covers the clock.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace npuperf::server {

// The server's own team for the canary collections, rounds and bundle (a
// team name starting "npuperf." is never a token's: core/auth.h), the
// server label that marks a canary collection, and its priority: the
// lowest, and core/assignment.h places a canary only where no user job can
// go (and is the only job it places on a quarantined device).
inline constexpr char kCanaryTeam[] = "npuperf.canary";
inline constexpr char kCanaryLabel[] = "npuperf.canary";
inline constexpr int32_t kCanaryPriority = -10;

inline constexpr double kCanaryFloorPct = 5;
inline constexpr double kDefaultCanarySpreadPct = 1;
inline constexpr int kMinCanaryPeers = 3;
inline constexpr int kSlowCanariesToQuarantine = 2;
inline constexpr int kPassingCanariesToRelease = 3;
inline constexpr double kMaxCanaryQuarantineShare = 0.25;

// Whether one more canary quarantine fits a SoC of `devices` devices (those
// that ran a canary lately) of which `quarantined` are quarantined by
// canaries now: at most max(1, floor(kMaxCanaryQuarantineShare x devices)).
bool CanaryQuarantineFits(int quarantined, int devices);

enum class CanaryVerdict { kPass, kSlow, kInconclusive };

struct CanaryJudgement {
  CanaryVerdict verdict = CanaryVerdict::kInconclusive;
  // Against what: "peers" (median of kMinCanaryPeers or more other devices)
  // or "history" (the device's own passing canaries); empty when
  // inconclusive.
  std::string reference;
  double reference_us = 0;
  // 100 (kernel / reference - 1).
  double excess_pct = 0;
  double threshold_pct = 0;
  // "canary 15.2 % slower than the median of 15 Ascend910B2 devices (threshold 5 %)".
  std::string reason;
};

// One canary kernel time against its SoC's other devices' latest canary
// times (peers) and this device's recent passing ones (history).
// spread_pct: the canary case's measured noise, nullopt while uncalibrated.
// clock_suspect: the canary's DVFS check did not find the rated clock.
CanaryJudgement JudgeCanary(double kernel_us, const std::vector<double>& peers,
                            const std::vector<double>& history, std::optional<double> spread_pct,
                            const std::string& soc, bool clock_suspect = false);

// A device's consecutive canary outcomes, as ActionFromHistory replays them
// from the stored verdicts.
struct CanaryStreak {
  int slow = 0;
  int passed = 0;
};

enum class CanaryAction { kNone, kQuarantine, kRelease };

// The streak after verdict v, and what it asks for: kQuarantine when a device
// not quarantined has kSlowCanariesToQuarantine slow canaries in a row,
// kRelease when a quarantined one has kPassingCanariesToRelease passes in a
// row. kInconclusive changes nothing.
CanaryAction NextCanaryAction(bool quarantined, CanaryVerdict v, CanaryStreak* streak);

// The same decision from a device's stored verdicts, newest first (how the
// store lists them, so that every replica and a restarted server decide
// alike): the streak is replayed oldest first, and the action is what the
// newest verdict asks for. A canary that failed to run is passed as kSlow by
// the caller: a device that cannot run the reference job is not trusted.
CanaryAction ActionFromHistory(bool quarantined, const std::vector<CanaryVerdict>& newest_first);

}  // namespace npuperf::server
