// The confirmation commands of `npuperf` (docs/comparisons.md,
// "Confirmation"): `confirm BASE CAND` reruns a REGRESSED or IMPROVED
// comparison of two rounds interleaved on another device and waits for the
// outcome; `confirmation ID` shows one (--wait: until it ends); and the parts
// of `compare --confirm` and `regressions --confirm` that wait for them.
//
// Exit codes of confirm and confirmation: 0 NOT_CONFIRMED, or a CONFIRMED
// improvement; 3 a CONFIRMED regression; 4 UNCONFIRMED, or still PENDING
// (--no-wait, or past --timeout); 1 refused (FAILED_PRECONDITION: e.g. the
// comparison is STABLE), 2 usage, 5 unavailable, 6 not found.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include "client/commands.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::client {

// How long --confirm and confirm wait for confirmations. Default: 2 h.
inline constexpr std::chrono::seconds kDefaultConfirmTimeout{2 * 3600};
// How often they ask.
inline constexpr std::chrono::seconds kConfirmPoll{2};

struct ConfirmArgs {
  std::string baseline, candidate;  // round ids (digits)
  int pairs = 0;                    // 0: the server's default (2)
  bool wait = true;                 // false: --no-wait
  std::chrono::seconds timeout = kDefaultConfirmTimeout;
  double alpha = 0, threshold_pct = 0, ratio_threshold_pp = 0;
};
int RunConfirm(Session& s, const ConfirmArgs& args, std::ostream& out, std::ostream& err);

struct ConfirmationArgs {
  std::string id;  // digits
  bool wait = false;
  std::chrono::seconds timeout = kDefaultConfirmTimeout;
};
int RunConfirmation(Session& s, const ConfirmationArgs& args, std::ostream& out, std::ostream& err);

// Replaces each pending confirmation with its state once it ended, asking
// every kConfirmPoll until none is pending or `timeout` passed (those still
// pending are left as read). Errors of GetConfirmation end the wait with
// that status.
absl::Status WaitForConfirmations(Session& s,
                                  google::protobuf::RepeatedPtrField<v1::Confirmation>* list,
                                  std::chrono::seconds timeout, std::ostream& err);

// One line per confirmation: "confirmation 7 op/case REGRESSED -> CONFIRMED:
// <reason> (reruns on host device 2: 100.1 -> 112.3 us)".
void PrintConfirmationLines(const google::protobuf::RepeatedPtrField<v1::Confirmation>& list,
                            std::ostream& out);

// "2 confirmed, 1 not confirmed, 0 unconfirmed, 0 pending".
std::string ConfirmationSummary(const google::protobuf::RepeatedPtrField<v1::Confirmation>& list);

// True when the confirmation of (baseline, candidate) rounds in list is
// NOT_CONFIRMED: the verdict was not reproduced, so it fails no bot.
bool NotConfirmed(const google::protobuf::RepeatedPtrField<v1::Confirmation>& list,
                  int64_t baseline_round_id, int64_t candidate_round_id);

}  // namespace npuperf::client
