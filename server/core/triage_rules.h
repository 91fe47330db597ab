#pragma once
// The triage decisions of regressions (docs/comparisons.md, "Triage"), as
// pure functions: both Store backends and the comparison queries call them,
// so that a regression opens, stays, closes and moves the same way
// everywhere.
//
// Why these rules:
// - A regression is one (team, operator, case, baseline label, rule). It is
//   the same regression while listings keep finding it, so a nightly bot
//   that found it yesterday does not find a "new" one today; it ends when
//   the case is no longer regressed (STABLE or IMPROVED: a fix that
//   overshoots is a fix too), and a later detection is a new regression.
// - Only DETECTED fails a bot: ACKNOWLEDGED means a person is on it,
//   WONT_FIX and FALSE_POSITIVE mean a person decided it needs nothing.
// - A case that is fine again closes DETECTED and ACKNOWLEDGED as FIXED (the
//   server's own transition, actor kTriageSystemActor): an unacknowledged
//   regression that went away is still one nobody needs to look at. A
//   WONT_FIX or FALSE_POSITIVE one just ends, keeping the person's verdict
//   (the precision counts it).
// - A person's FIXED ends the regression at once: if the case still
//   regresses, the next listing opens a new DETECTED one (the fix did not
//   work, and that should alarm).
// - Transitions go forward only (DETECTED -> ACKNOWLEDGED -> closed, or
//   DETECTED -> closed), each one a compare-and-set on the state the caller
//   saw, so two people triaging at once cannot overwrite each other.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/store/records.h"

namespace npuperf::server {

// The rules a regression can be found by (the `rule` metric label: a
// bounded set). "duration": the duration verdict (comparator.h), the only
// one that says REGRESSED today.
inline constexpr const char* kDurationRule = "duration";
inline constexpr const char* kRegressionRules[] = {kDurationRule};

// The actor of the server's own transitions (a case STABLE again).
inline constexpr char kTriageSystemActor[] = "npuperf";

// What an observation does to a key's current regression.
enum class ObservationAction {
  kNothing,     // not regressed, and no current regression
  kOpen,        // regressed, none current: a new DETECTED one
  kTouch,       // regressed, current one: last seen (and round) updated
  kCloseFixed,  // no longer regressed, DETECTED/ACKNOWLEDGED: -> FIXED, ended
  kEnd,         // no longer regressed, WONT_FIX/FALSE_POSITIVE: ended as is
};

// current: the key's current regression (ended_ms == 0), or nullptr.
ObservationAction DecideObservation(const RegressionRecord* current, bool regressed);

// What one observation does, for a backend to save: the whole update, so
// both backends only load the current record, then write `record` (insert it
// when kOpen, update it otherwise) and append `transition` if any.
struct ObservationOutcome {
  ObservationAction action = ObservationAction::kNothing;
  // kOpen: the new DETECTED regression (id 0: the backend assigns it);
  // kTouch: the current one seen again (last seen, and last round and
  // seen_rounds when the round is new); kCloseFixed / kEnd: the current one
  // ended at now_ms (kCloseFixed also FIXED). kNothing: empty.
  RegressionRecord record;
  // kOpen: UNSPECIFIED -> DETECTED; kCloseFixed: the state -> FIXED; both by
  // kTriageSystemActor, with the round in the note. Its regression is
  // record.id (after the insert for kOpen).
  std::optional<RegressionTransitionRecord> transition;
  // The key's current regression after the observation (what
  // Store::ObserveRegressions returns): record for kOpen and kTouch, an empty
  // record (id 0) otherwise.
  RegressionRecord Current() const;
};
ObservationOutcome ApplyObservation(const RegressionRecord* current, const RegressionObservation& o,
                                    int64_t now_ms);

// True for DETECTED and ACKNOWLEDGED.
bool IsOpen(v1::RegressionState s);
// Only a DETECTED regression makes `npuperf regressions` exit 3.
bool FailsBots(v1::RegressionState s);
// WONT_FIX and FALSE_POSITIVE cases are left out of listings unless
// include_closed.
bool HiddenByDefault(v1::RegressionState s);
// DETECTED -> ACKNOWLEDGED | FIXED | WONT_FIX | FALSE_POSITIVE;
// ACKNOWLEDGED -> FIXED | WONT_FIX | FALSE_POSITIVE; nothing else.
bool IsLegalTriage(v1::RegressionState from, v1::RegressionState to);

// Why a person may not move r from `expected` to `next`, or OK: the
// compare-and-set (FAILED_PRECONDITION "regression 7 is ACKNOWLEDGED, not
// DETECTED"), then IsLegalTriage (FAILED_PRECONDITION naming both states).
absl::Status CheckTriage(const RegressionRecord& r, v1::RegressionState expected,
                         v1::RegressionState next);

// r after a person's legal move to next at now_ms: the state; confirmed
// when next is ACKNOWLEDGED, FIXED or WONT_FIX (a FALSE_POSITIVE clears it:
// the person changed their mind); ended at now_ms when next is FIXED.
RegressionRecord ApplyTriage(RegressionRecord r, v1::RegressionState next, int64_t now_ms);

// "DETECTED" for REGRESSION_STATE_DETECTED; the `state` metric label is its
// lowercase.
std::string RegressionStateName(v1::RegressionState s);

// confirmed / (confirmed + false_positives); NaN when both are 0 (no
// triaged regression: the precision is unknown, not 0 or 1).
double RulePrecision(int64_t confirmed, int64_t false_positives);

// A rule's triaged regressions: confirmed (RegressionRecord::confirmed and
// not FALSE_POSITIVE) and false positives.
struct TriagedCounts {
  int64_t confirmed = 0;
  int64_t false_positives = 0;
};
// Per rule, every rule of kRegressionRules included (zeros when none).
std::map<std::string, TriagedCounts> TriagedByRule(const std::vector<RegressionCount>& counts);

}  // namespace npuperf::server
