// `npuperf regressions` (declared in compare_commands.h): the ListRegressions
// request, what a bot fails on (new regressions, and drifts that began in the
// window), the drift lines, and --since.
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/bisect_commands.h"
#include "client/compare_commands.h"
#include "client/confirm_commands.h"
#include "client/format.h"
#include "client/triage_commands.h"
#include "client/verdict_output.h"
#include "common/clock.h"
#include "common/duration_text.h"
#include "google/protobuf/util/time_util.h"

namespace npuperf::client {
namespace {

using google::protobuf::util::TimeUtil;

// One line per drift of a ListRegressions answer, and the cases left out.
void PrintDrifts(const v1::ListRegressionsResponse& resp, std::ostream& out) {
  for (const v1::Drift& d : resp.drifts()) {
    out << absl::StrFormat(
        "drift %s/%s: %.3f -> %.3f us (%+.1f %%) since round %d (%s), %d rounds, p=%.3f%s\n",
        d.operator_name(), d.case_id(), d.before_us(), d.after_us(), d.change_pct(),
        d.began_round_id(), TimeUtil::ToString(d.began_at()), d.rounds_since(), d.p_value(),
        d.began_in_window() ? " NEW" : " (began before the window)");
  }
  if (resp.drift_cases_unexamined() > 0) {
    out << resp.drift_cases_unexamined() << " cases not examined for drifts (over 200)\n";
  }
}

// The ListRegressions request of `regressions`; INVALID_ARGUMENT with the
// usage error's text.
absl::StatusOr<v1::ListRegressionsRequest> RegressionsRequest(const RegressionsArgs& a,
                                                              Clock::SystemTime now) {
  v1::ListRegressionsRequest req;
  if (!a.since.empty()) {
    auto since = ParseSince(a.since, ToUnixMillis(now));
    if (!since.ok()) return since.status();
    *req.mutable_since() = TimeUtil::MillisecondsToTimestamp(*since);
  }
  if (a.since.empty() && a.baseline_label.empty()) {
    return absl::InvalidArgumentError("give --baseline LABEL or --since TIME");
  }
  req.set_baseline_label(a.baseline_label);
  req.set_candidate_collection_id(a.collection);
  req.set_operator_name(a.operator_name);
  req.set_include_closed(a.include_closed);
  req.set_confirm(a.verdict.confirm);
  *req.mutable_options() = OptionsOf(a.verdict);
  return req;
}

// "npuperf regressions --baseline branch=main --collection c-9".
std::string RegressionsTitle(const RegressionsArgs& a) {
  std::string t = "npuperf regressions";
  const std::pair<const char*, const std::string*> flags[] = {{" --baseline ", &a.baseline_label},
                                                              {" --since ", &a.since},
                                                              {" --collection ", &a.collection},
                                                              {" --operator ", &a.operator_name}};
  for (const auto& [flag, value] : flags) {
    if (!value->empty()) absl::StrAppend(&t, flag, *value);
  }
  return t;
}

}  // namespace

absl::StatusOr<int64_t> ParseSince(const std::string& since, int64_t now_ms) {
  google::protobuf::Timestamp t;
  if (TimeUtil::FromString(since, &t)) return TimeUtil::TimestampToMilliseconds(t);
  if (auto back = ParseDurationText(since); back.ok()) return now_ms - back->count();
  return absl::InvalidArgumentError(
      absl::StrCat("--since '", since, "': want an RFC 3339 time or <n>s|m|h|d"));
}

int RunRegressions(Session& s, const RegressionsArgs& a, std::ostream& out, std::ostream& err) {
  auto req = RegressionsRequest(a, s.clock().SystemNow());
  if (!req.ok()) {
    return ReportUsage("regressions", std::string(req.status().message()),
                       ErrorConfig(s, a.verdict), out, err);
  }
  v1::ListRegressionsResponse resp;
  absl::Status st = s.Call(&Queries::ListRegressions, *req, &resp);
  if (st.ok() && a.verdict.confirm) {
    st = WaitForConfirmations(s, resp.mutable_confirmations(), a.verdict.confirm_timeout, err);
  }
  if (!st.ok()) return ReportError(st, ErrorConfig(s, a.verdict), out, err);
  std::vector<v1::Bisection> bisections;
  if (a.bisect) {
    auto started = BisectRegressions(s, BisectRegressionsArgs{a.repo, a.ops_dir}, resp, err);
    if (!started.ok()) return ReportError(started.status(), ErrorConfig(s, a.verdict), out, err);
    bisections = *std::move(started);
  }
  Verdicts found(kRegressionsSchema, "regressions", resp);
  VerdictReport& r = found.report;
  r.title = RegressionsTitle(a);
  r.counts = resp.counts();
  r.summary = absl::StrCat(resp.regressions_size(), " regressed / ", resp.compared(),
                           " comparable against ", resp.baseline_description(), " (",
                           CountsSummary(resp.counts()), ")");
  r.comparisons.assign(resp.regressions().begin(), resp.regressions().end());
  r.regressed_rows_only = true;
  // A bot fails on new regressions only: the acknowledged and closed ones
  // were seen before (docs/comparisons.md, "Triage"), and with --confirm a
  // NOT_CONFIRMED one was not reproduced.
  const int fresh = NewRegressions(resp);
  if (fresh != resp.regressions_size()) {
    absl::StrAppend(&r.summary, "; ", fresh, " new, ", resp.regressions_size() - fresh,
                    a.verdict.confirm ? " already triaged or not confirmed" : " already triaged");
  }
  if (a.verdict.confirm) {
    absl::StrAppend(&r.summary, "; ", ConfirmationSummary(resp.confirmations()));
  }
  // A drift that began in the window fails it too (docs/comparisons.md, "Drifts").
  int new_drifts = 0;
  for (const v1::Drift& d : resp.drifts()) new_drifts += d.began_in_window();
  found.exit_counts = resp.counts();
  found.exit_counts->set_regressed(fresh + new_drifts);
  if (resp.tracked_size() == resp.regressions_size()) {
    for (const v1::Regression& t : resp.tracked()) {
      const bool seen = t.id() != 0 && t.state() != v1::REGRESSION_STATE_DETECTED;
      r.triaged.push_back(
          seen ? absl::StrCat(RegressionStateText(t.state()), " (regression ", t.id(), ")") : "");
    }
  }
  if (resp.drifts_size() > 0) {
    absl::StrAppend(&r.summary, "; ", resp.drifts_size(), " drifted (", new_drifts, " new)");
  }
  if (a.bisect) {
    std::vector<std::string> ids;
    for (const v1::Bisection& b : bisections) ids.push_back(absl::StrCat(b.id()));
    absl::StrAppend(&r.summary, "; ", bisections.size(), " bisection(s)",
                    ids.empty() ? "" : absl::StrCat(" (", absl::StrJoin(ids, ", "), ")"),
                    ": npuperf bisection ID");
  }
  found.text = [&resp, summary = r.summary, precision = a.precision](std::ostream& o) {
    if (resp.regressions_size() > 0) PrintComparisonTable(resp.regressions(), o);
    PrintTriageLines(resp, precision, o);
    PrintConfirmationLines(resp.confirmations(), o);
    PrintDrifts(resp, o);
    o << summary << "\n";
  };
  return Emit(s, a.verdict, std::move(found), out);
}

}  // namespace npuperf::client
