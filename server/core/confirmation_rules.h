#pragma once
// The decisions of a confirmation (docs/comparisons.md, "Confirmation"), as
// pure functions: where its reruns run, what it does next, and what the
// reruns say about the verdict they confirm. compare/confirmations.h applies
// them to the store.
//
// Why these rules:
// - A verdict is one comparison of two rounds, each measured once on its own
//   device. A device that was slow that hour (a noisy neighbour, throttled
//   memory, a thermal limit) gives a REGRESSED no code change caused, and a
//   fast one an IMPROVED. Rerunning both bundles on one device that measured
//   neither takes both devices out of the comparison.
// - Another host than both originals is preferred: it also rules out a
//   host-wide cause (a co-tenant, the host's driver). An idle device beats a
//   busy one (it starts sooner); host name and device id break ties, so
//   every replica picks the same device.
// - The reruns alternate, baseline first (A B A B): a drift of the device
//   during the confirmation (it warms up, a neighbour starts) lands on both
//   sides instead of on one. They run one after another, each step an
//   ordinary one-job collection (priority, caps, fairness and leases apply)
//   submitted once the step before it succeeded.
// - The reruns' samples are pooled per side and judged with the original
//   comparison's options. The same verdict again is CONFIRMED; STABLE or the
//   opposite verdict is NOT_CONFIRMED. A rerun that failed or was cancelled,
//   or reruns that give no verdict (INSUFFICIENT, NOT_COMPARABLE, ERRORED),
//   leave it UNCONFIRMED with the reason: nothing was shown either way, and
//   the original verdict stands.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "npuperf/v1/query_service.pb.h"

namespace npuperf::server {

// Reruns per side: at least 1, at most kMaxConfirmationPairs, default 2.
inline constexpr int kDefaultConfirmationPairs = 2;
inline constexpr int kMaxConfirmationPairs = 5;

// Side names of ConfirmationStep.side.
inline constexpr char kBaselineSide[] = "baseline";
inline constexpr char kCandidateSide[] = "candidate";

// True for REGRESSED and IMPROVED: the verdicts a confirmation can confirm.
bool Confirmable(v1::Verdict v);

// The device every rerun of a confirmation runs on, or why there is none.
struct RerunDevice {
  std::optional<v1::DevicePlacement> device;
  std::string reason;  // when there is none
};

// Among the online agents' devices of `soc` that are not unhealthy or
// offline, and none of `originals` (host, device id), the preferred one (see
// above); no device: the reason, naming the SoC and the excluded devices.
RerunDevice ChooseRerunDevice(const std::string& soc,
                              const std::vector<v1::DevicePlacement>& originals,
                              const std::vector<v1::AgentStatus>& agents);

// The steps of `pairs` pairs: baseline, candidate, baseline, ...
std::vector<v1::ConfirmationStep> RerunSteps(int pairs);

// What a pending confirmation does next, from its steps as last read.
struct ConfirmationMove {
  enum Kind {
    kSubmit,    // submit steps[step]
    kWait,      // steps[step] is queued or running
    kEvaluate,  // every step succeeded: judge the reruns
    kGiveUp,    // steps[step] failed or was cancelled: UNCONFIRMED
  };
  Kind kind = kWait;
  int step = 0;
};
ConfirmationMove NextConfirmationMove(const v1::Confirmation& c);

// "baseline rerun 2 of 2": how a step is named in reasons and descriptions.
std::string StepName(const v1::Confirmation& c, int step);

// What the reruns' comparison says about the original verdict: the state
// and its reason (e.g. "the reruns gave STABLE (p=0.41>=0.01), not
// REGRESSED").
struct ConfirmationOutcome {
  v1::ConfirmationState state = v1::CONFIRMATION_STATE_UNCONFIRMED;
  std::string reason;
};
ConfirmationOutcome DecideConfirmation(v1::Verdict original, const v1::RoundComparison& rerun);

// True when the state is CONFIRMED, NOT_CONFIRMED or UNCONFIRMED.
bool ConfirmationTerminal(v1::ConfirmationState s);

}  // namespace npuperf::server
