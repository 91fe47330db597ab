#include "client/triage_commands.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/format.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"

namespace npuperf::client {
namespace {

using google::protobuf::util::TimeUtil;

// "b/p0 against branch=main (duration)".
std::string Subject(const v1::Regression& r) {
  return absl::StrCat(r.operator_name(), "/", r.case_id(), " against ", r.baseline_label(), " (",
                      r.rule(), ")");
}

void PrintRegression(const v1::GetRegressionResponse& resp, std::ostream& out) {
  const v1::Regression& r = resp.regression();
  out << "regression " << r.id() << " " << Subject(r) << ": " << RegressionStateText(r.state())
      << "\n";
  out << "  detected " << TimeUtil::ToString(r.detected_at()) << " in round " << r.first_round_id()
      << ", last seen " << TimeUtil::ToString(r.last_seen_at()) << " in round " << r.last_round_id()
      << " (" << r.seen_rounds() << " rounds)\n";
  if (r.has_ended_at()) out << "  ended " << TimeUtil::ToString(r.ended_at()) << "\n";
  for (const v1::RegressionTransition& t : resp.transitions()) {
    out << "  " << TimeUtil::ToString(t.at()) << " " << t.actor() << ": "
        << (t.from_state() == v1::REGRESSION_STATE_UNSPECIFIED
                ? std::string()
                : RegressionStateText(t.from_state()) + " -> ")
        << RegressionStateText(t.to_state());
    if (!t.note().empty()) out << " \"" << t.note() << "\"";
    out << "\n";
  }
}

// The proto3 JSON of m on out (--format json), else the text.
template <typename M, typename F>
void Print(const M& m, const ClientConfig& config, std::ostream& out, F text) {
  if (config.format == OutputFormat::kJson) {
    out << ToJson(m) << "\n";
  } else {
    text(m, out);
  }
}

}  // namespace

std::string RegressionStateText(v1::RegressionState s) {
  constexpr size_t kPrefix = sizeof("REGRESSION_STATE_") - 1;
  const std::string name = v1::RegressionState_Name(s);
  return name.size() > kPrefix ? name.substr(kPrefix) : absl::StrCat(static_cast<int>(s));
}

int RunTriage(Session& s, const TriageArgs& a, std::ostream& out, std::ostream& err) {
  int64_t id = 0;
  if (!absl::SimpleAtoi(a.id, &id) || id <= 0) {
    return ReportUsage("triage", "ID must be a regression id (digits, at least 1)", s.config(), out,
                       err);
  }
  v1::GetRegressionRequest get;
  get.set_id(id);
  v1::GetRegressionResponse current;
  if (const absl::Status st = s.Call(&Queries::GetRegression, get, &current); !st.ok()) {
    return ReportError(st, s.config(), out, err);
  }
  if (a.new_state == v1::REGRESSION_STATE_UNSPECIFIED) {
    Print(current, s.config(), out, PrintRegression);
    return kExitOk;
  }
  v1::TriageRegressionRequest req;
  req.set_id(id);
  req.set_expected_state(current.regression().state());
  req.set_new_state(a.new_state);
  req.set_note(a.note);
  v1::TriageRegressionResponse resp;
  const absl::Status st = s.Call(&Queries::TriageRegression, req, &resp);
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  Print(resp, s.config(), out, [&](const v1::TriageRegressionResponse& r, std::ostream& o) {
    o << "regression " << r.regression().id() << " " << Subject(r.regression()) << ": "
      << RegressionStateText(req.expected_state()) << " -> "
      << RegressionStateText(r.regression().state()) << "\n";
  });
  return kExitOk;
}

int NewRegressions(const v1::ListRegressionsResponse& resp) {
  const bool tracked = resp.tracked_size() == resp.regressions_size();
  const bool confirmed = resp.confirmations_size() == resp.regressions_size();
  int n = 0;
  for (int i = 0; i < resp.regressions_size(); ++i) {
    if (tracked && resp.tracked(i).id() != 0 &&
        resp.tracked(i).state() != v1::REGRESSION_STATE_DETECTED) {
      continue;  // triaged before
    }
    if (confirmed && resp.confirmations(i).state() == v1::CONFIRMATION_STATE_NOT_CONFIRMED) {
      continue;  // its reruns did not reproduce it
    }
    ++n;
  }
  return n;
}

void PrintTriageLines(const v1::ListRegressionsResponse& resp, bool precision, std::ostream& out) {
  for (const v1::Regression& r : resp.tracked()) {
    if (r.id() == 0) continue;
    out << "regression " << r.id() << " " << r.operator_name() << "/" << r.case_id() << ": "
        << RegressionStateText(r.state()) << ", seen in " << r.seen_rounds() << " round"
        << (r.seen_rounds() == 1 ? "" : "s") << " since " << TimeUtil::ToString(r.detected_at())
        << "\n";
  }
  if (resp.hidden_closed() > 0) {
    out << resp.hidden_closed()
        << " regressed case(s) hidden: their regression is WONT_FIX or FALSE_POSITIVE (--all "
           "lists them)\n";
  }
  if (!precision) return;
  for (const v1::RegressionPrecision& p : resp.precision()) {
    out << "precision " << p.rule() << ": "
        << (std::isnan(p.precision()) ? std::string("unknown")
                                      : absl::StrFormat("%.2f", p.precision()))
        << " (" << p.confirmed() << " confirmed, " << p.false_positives()
        << " false positive(s) among triaged regressions)\n";
  }
}

}  // namespace npuperf::client
