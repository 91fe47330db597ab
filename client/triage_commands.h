// The triage commands of `npuperf` (docs/comparisons.md, "Triage"):
// `triage ID` shows a regression with its transitions, `triage ID --ack |
// --fixed | --wont-fix | --false-positive [--note TEXT]` moves it; and the
// parts of `regressions` that read the tracked regressions (which of them
// fail a bot, --precision).
//
// Exit codes of triage: 0 done, 1 refused (FAILED_PRECONDITION: it changed
// since it was read, or the move is not allowed), 2 usage, 5 unavailable,
// 6 not found (or another team's).
#pragma once

#include <ostream>
#include <string>

#include "client/commands.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::client {

struct TriageArgs {
  std::string id;  // the regression id (digits)
  // UNSPECIFIED: show it; else the state to move it to.
  v1::RegressionState new_state = v1::REGRESSION_STATE_UNSPECIFIED;
  std::string note;
};

// Reads the regression first (GetRegression), then sends its state as the
// expected_state of TriageRegression, so a concurrent change is refused,
// never overwritten.
int RunTriage(Session& s, const TriageArgs& args, std::ostream& out, std::ostream& err);

// The listed regressions that fail a bot: those without a tracked
// regression (or an untracked listing) and the DETECTED ones, unless their
// confirmation (with confirm) is NOT_CONFIRMED.
int NewRegressions(const v1::ListRegressionsResponse& resp);

// The text lines `regressions` prints after its table: each tracked
// regression's id and state, the hidden closed ones, and with precision the
// per-rule precision.
void PrintTriageLines(const v1::ListRegressionsResponse& resp, bool precision, std::ostream& out);

// "DETECTED" for REGRESSION_STATE_DETECTED.
std::string RegressionStateText(v1::RegressionState s);

}  // namespace npuperf::client
