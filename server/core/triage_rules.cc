#include "server/core/triage_rules.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "server/core/limits.h"

namespace npuperf::server {
ObservationAction DecideObservation(const RegressionRecord* current, bool regressed) {
  if (current == nullptr) return regressed ? ObservationAction::kOpen : ObservationAction::kNothing;
  if (regressed) return ObservationAction::kTouch;
  return IsOpen(current->state) ? ObservationAction::kCloseFixed : ObservationAction::kEnd;
}

namespace {

RegressionRecord Opened(const RegressionObservation& o, int64_t now_ms) {
  RegressionRecord r;
  r.key = o.key;
  r.state = v1::REGRESSION_STATE_DETECTED;
  r.detected_ms = r.last_seen_ms = now_ms;
  r.first_round_id = r.last_round_id = o.round_id;
  r.seen_rounds = 1;
  return r;
}

RegressionTransitionRecord SystemTransition(v1::RegressionState from, v1::RegressionState to,
                                            std::string note, int64_t now_ms) {
  return RegressionTransitionRecord{from, to, kTriageSystemActor, std::move(note), now_ms};
}

}  // namespace

ObservationOutcome ApplyObservation(const RegressionRecord* current, const RegressionObservation& o,
                                    int64_t now_ms) {
  ObservationOutcome out;
  out.action = DecideObservation(current, o.regressed);
  switch (out.action) {
    case ObservationAction::kNothing: break;
    case ObservationAction::kOpen:
      out.record = Opened(o, now_ms);
      out.transition = SystemTransition(v1::REGRESSION_STATE_UNSPECIFIED, out.record.state,
                                        absl::StrCat("regressed in round ", o.round_id), now_ms);
      break;
    case ObservationAction::kTouch:
      out.record = *current;
      out.record.last_seen_ms = now_ms;
      if (out.record.last_round_id != o.round_id) {
        out.record.last_round_id = o.round_id;
        ++out.record.seen_rounds;
      }
      break;
    case ObservationAction::kCloseFixed:
      out.record = *current;
      out.transition =
          SystemTransition(current->state, v1::REGRESSION_STATE_FIXED,
                           absl::StrCat("no longer regressed in round ", o.round_id), now_ms);
      out.record.state = v1::REGRESSION_STATE_FIXED;
      out.record.ended_ms = now_ms;
      break;
    case ObservationAction::kEnd:
      out.record = *current;
      out.record.ended_ms = now_ms;
      break;
  }
  return out;
}

RegressionRecord ObservationOutcome::Current() const {
  const bool current = action == ObservationAction::kOpen || action == ObservationAction::kTouch;
  return current ? record : RegressionRecord();
}

bool IsOpen(v1::RegressionState s) {
  return s == v1::REGRESSION_STATE_DETECTED || s == v1::REGRESSION_STATE_ACKNOWLEDGED;
}

bool FailsBots(v1::RegressionState s) { return s == v1::REGRESSION_STATE_DETECTED; }

bool HiddenByDefault(v1::RegressionState s) {
  return s == v1::REGRESSION_STATE_WONT_FIX || s == v1::REGRESSION_STATE_FALSE_POSITIVE;
}

bool IsLegalTriage(v1::RegressionState from, v1::RegressionState to) {
  const bool closing = to == v1::REGRESSION_STATE_FIXED || to == v1::REGRESSION_STATE_WONT_FIX ||
                       to == v1::REGRESSION_STATE_FALSE_POSITIVE;
  if (from == v1::REGRESSION_STATE_DETECTED) {
    return closing || to == v1::REGRESSION_STATE_ACKNOWLEDGED;
  }
  return from == v1::REGRESSION_STATE_ACKNOWLEDGED && closing;
}

absl::Status CheckTriage(const RegressionRecord& r, v1::RegressionState expected,
                         v1::RegressionState next) {
  if (r.state != expected) {
    return absl::FailedPreconditionError(
        absl::StrCat("regression ", r.id, " is ", RegressionStateName(r.state), ", not ",
                     RegressionStateName(expected), " (it changed since it was read)"));
  }
  if (!IsLegalTriage(r.state, next)) {
    return absl::FailedPreconditionError(
        absl::StrCat("regression ", r.id, " is ", RegressionStateName(r.state),
                     " and cannot become ", RegressionStateName(next),
                     " (DETECTED -> ACKNOWLEDGED -> FIXED | WONT_FIX | FALSE_POSITIVE)"));
  }
  return absl::OkStatus();
}

RegressionRecord ApplyTriage(RegressionRecord r, v1::RegressionState next, int64_t now_ms) {
  r.state = next;
  r.confirmed = next != v1::REGRESSION_STATE_FALSE_POSITIVE;
  if (next == v1::REGRESSION_STATE_FIXED) r.ended_ms = now_ms;
  return r;
}

std::string RegressionStateName(v1::RegressionState s) {
  constexpr absl::string_view kPrefix = "REGRESSION_STATE_";
  std::string name = v1::RegressionState_Name(s);
  if (name.empty()) return absl::StrCat("STATE_", static_cast<int>(s));
  return name.substr(kPrefix.size());
}

double RulePrecision(int64_t confirmed, int64_t false_positives) {
  if (confirmed + false_positives == 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(confirmed) / static_cast<double>(confirmed + false_positives);
}

std::map<std::string, TriagedCounts> TriagedByRule(const std::vector<RegressionCount>& counts) {
  std::map<std::string, TriagedCounts> out;
  for (const char* rule : kRegressionRules) out[rule];
  for (const RegressionCount& c : counts) {
    TriagedCounts& t = out[c.rule];
    if (c.state == v1::REGRESSION_STATE_FALSE_POSITIVE) {
      t.false_positives += c.count;
    } else if (c.confirmed) {
      t.confirmed += c.count;
    }
  }
  return out;
}

}  // namespace npuperf::server
