#include "client/confirm_commands.h"

#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/compare_commands.h"
#include "client/format.h"
#include "common/status_util.h"

namespace npuperf::client {
namespace {

std::string StateText(v1::ConfirmationState s) {
  switch (s) {
    case v1::CONFIRMATION_STATE_PENDING: return "PENDING";
    case v1::CONFIRMATION_STATE_CONFIRMED: return "CONFIRMED";
    case v1::CONFIRMATION_STATE_NOT_CONFIRMED: return "NOT_CONFIRMED";
    case v1::CONFIRMATION_STATE_UNCONFIRMED: return "UNCONFIRMED";
    default: return "UNSPECIFIED";
  }
}

// The exit code of one confirmation (the header's contract).
int ExitCodeOf(const v1::Confirmation& c) {
  switch (c.state()) {
    case v1::CONFIRMATION_STATE_CONFIRMED:
      return c.original_verdict() == v1::VERDICT_REGRESSED ? kExitRegressed : kExitOk;
    case v1::CONFIRMATION_STATE_NOT_CONFIRMED: return kExitOk;
    default: return kExitNoVerdict;
  }
}

int Print(Session& s, const v1::Confirmation& c, std::ostream& out) {
  const int code = ExitCodeOf(c);
  if (s.config().format == OutputFormat::kJson) {
    out << ToJson(c) << "\n";
    return code;
  }
  google::protobuf::RepeatedPtrField<v1::Confirmation> one;
  *one.Add() = c;
  PrintConfirmationLines(one, out);
  for (const v1::ConfirmationStep& step : c.steps()) {
    out << absl::StrFormat("  %-9s %-16s %-26s round %-6d %.3f us\n", step.side(),
                           step.collection_id().empty() ? "-" : step.collection_id(),
                           v1::CollectionState_Name(step.state()), step.round_id(),
                           step.kernel_time_us());
  }
  return code;
}

}  // namespace

absl::Status WaitForConfirmations(Session& s,
                                  google::protobuf::RepeatedPtrField<v1::Confirmation>* list,
                                  std::chrono::seconds timeout, std::ostream& err) {
  const Clock::MonotonicTime deadline = s.clock().MonotonicNow() + timeout;
  bool announced = false;
  while (true) {
    bool pending = false;
    for (v1::Confirmation& c : *list) {
      if (c.state() != v1::CONFIRMATION_STATE_PENDING || c.id() == 0) continue;
      v1::GetConfirmationRequest req;
      req.set_confirmation_id(c.id());
      v1::GetConfirmationResponse resp;
      const absl::Status st = s.Call(&Queries::GetConfirmation, req, &resp);
      if (!st.ok()) return st;
      c = resp.confirmation();
      pending = pending || c.state() == v1::CONFIRMATION_STATE_PENDING;
    }
    if (!pending || s.clock().MonotonicNow() >= deadline) return absl::OkStatus();
    if (!announced) {
      err << "npuperf: waiting for " << ConfirmationSummary(*list) << " confirmations\n";
      announced = true;
    }
    s.clock().SleepFor(kConfirmPoll);
  }
}

void PrintConfirmationLines(const google::protobuf::RepeatedPtrField<v1::Confirmation>& list,
                            std::ostream& out) {
  for (const v1::Confirmation& c : list) {
    out << "confirmation " << c.id() << " " << c.operator_name()
        << (c.case_id().empty() ? "" : "/" + c.case_id()) << " "
        << VerdictName(c.original_verdict()) << " -> " << StateText(c.state());
    if (!c.reason().empty()) out << ": " << c.reason();
    if (c.has_device()) {
      out << " (reruns on " << c.device().host() << " device " << c.device().device_id();
      if (c.has_rerun()) {
        out << absl::StrFormat(": %.3f -> %.3f us", c.rerun().duration().baseline_us(),
                               c.rerun().duration().candidate_us());
      }
      out << ")";
    }
    out << "\n";
  }
}

std::string ConfirmationSummary(const google::protobuf::RepeatedPtrField<v1::Confirmation>& list) {
  std::map<v1::ConfirmationState, int> n;
  for (const v1::Confirmation& c : list) ++n[c.state()];
  return absl::StrCat(n[v1::CONFIRMATION_STATE_CONFIRMED], " confirmed, ",
                      n[v1::CONFIRMATION_STATE_NOT_CONFIRMED], " not confirmed, ",
                      n[v1::CONFIRMATION_STATE_UNCONFIRMED], " unconfirmed, ",
                      n[v1::CONFIRMATION_STATE_PENDING], " pending");
}

bool NotConfirmed(const google::protobuf::RepeatedPtrField<v1::Confirmation>& list,
                  int64_t baseline_round_id, int64_t candidate_round_id) {
  for (const v1::Confirmation& c : list) {
    if (c.baseline_round_id() == baseline_round_id &&
        c.candidate_round_id() == candidate_round_id) {
      return c.state() == v1::CONFIRMATION_STATE_NOT_CONFIRMED;
    }
  }
  return false;
}

int RunConfirm(Session& s, const ConfirmArgs& a, std::ostream& out, std::ostream& err) {
  int64_t base = 0, cand = 0;
  if (!IsRoundId(a.baseline, &base) || !IsRoundId(a.candidate, &cand)) {
    return ReportUsage("confirm", "give two round ids (digits)", s.config(), out, err);
  }
  v1::RequestConfirmationRequest req;
  req.set_baseline_round_id(base);
  req.set_candidate_round_id(cand);
  req.set_pairs(a.pairs);
  req.mutable_options()->set_alpha(a.alpha);
  req.mutable_options()->set_duration_threshold_pct(a.threshold_pct);
  req.mutable_options()->set_ratio_threshold_pp(a.ratio_threshold_pp);
  v1::RequestConfirmationResponse resp;
  const absl::Status st = s.Call(&Queries::RequestConfirmation, req, &resp);
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  google::protobuf::RepeatedPtrField<v1::Confirmation> list;
  *list.Add() = resp.confirmation();
  if (a.wait) {
    if (absl::Status w = WaitForConfirmations(s, &list, a.timeout, err); !w.ok()) {
      return ReportError(w, s.config(), out, err);
    }
  }
  return Print(s, list[0], out);
}

int RunConfirmation(Session& s, const ConfirmationArgs& a, std::ostream& out, std::ostream& err) {
  int64_t id = 0;
  if (!absl::SimpleAtoi(a.id, &id) || id <= 0) {
    return ReportUsage("confirmation", "ID must be a confirmation id (digits, at least 1)",
                       s.config(), out, err);
  }
  google::protobuf::RepeatedPtrField<v1::Confirmation> list;
  list.Add()->set_id(id);
  list[0].set_state(v1::CONFIRMATION_STATE_PENDING);  // read it at least once
  if (absl::Status w =
          WaitForConfirmations(s, &list, a.wait ? a.timeout : std::chrono::seconds(0), err);
      !w.ok()) {
    return ReportError(w, s.config(), out, err);
  }
  return Print(s, list[0], out);
}

}  // namespace npuperf::client
