#include "client/compare_commands.h"

#include <functional>
#include <optional>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/ci_format.h"
#include "client/format.h"
#include "client/noise_commands.h"
#include "client/report_commands.h"
#include "client/triage_commands.h"
#include "common/clock.h"
#include "common/duration_text.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "nlohmann/json.hpp"

namespace npuperf::client {
namespace {

using google::protobuf::util::TimeUtil;

// Version of the JSON envelope of compare and regressions (docs/api.md).
constexpr char kCompareSchema[] = "npuperf.compare.v1";
constexpr char kRegressionsSchema[] = "npuperf.regressions.v1";

v1::CompareOptions OptionsOf(const VerdictArgs& v) {
  v1::CompareOptions o;
  o.set_alpha(v.alpha);
  o.set_duration_threshold_pct(v.threshold_pct);
  o.set_ratio_threshold_pp(v.ratio_threshold_pp);
  return o;
}

// Verdicts the practical threshold took part in (the others never reached it).
bool HasThreshold(v1::Verdict v) {
  return v == v1::VERDICT_IMPROVED || v == v1::VERDICT_REGRESSED || v == v1::VERDICT_STABLE;
}

void PrintComparisonTable(const google::protobuf::RepeatedPtrField<v1::RoundComparison>& rows,
                          std::ostream& out) {
  out << absl::StrFormat("%-34s %-15s %11s %11s  %-24s %-9s %s\n", "operator/case", "verdict",
                         "base_us", "cand_us", "ratio [CI]", "p", "rule / flags");
  for (const auto& c : rows) {
    const auto& d = c.duration();
    std::string tail = c.rule();
    if (const std::string t = ThresholdText(d); !t.empty() && HasThreshold(c.verdict())) {
      absl::StrAppend(&tail, "  [", t, "]");
    }
    if (c.flags_size() > 0) absl::StrAppend(&tail, "  {", absl::StrJoin(c.flags(), ", "), "}");
    out << absl::StrFormat(
        "%-34s %-15s %11.3f %11.3f  %-24s %-9.2g %s\n",
        c.case_id().empty() ? c.operator_name() : c.operator_name() + "/" + c.case_id(),
        VerdictName(c.verdict()), d.baseline_us(), d.candidate_us(), RatioText(d), d.p_value(),
        tail);
  }
}

void PrintRoundComparison(const v1::RoundComparison& c, std::ostream& out) {
  const auto& d = c.duration();
  out << "round " << c.baseline_round_id() << " -> " << c.candidate_round_id() << "  "
      << c.operator_name() << "/" << c.case_id() << "\n";
  out << "verdict " << VerdictName(c.verdict()) << ": " << c.rule() << "\n";
  if (const std::string t = ThresholdText(d); !t.empty()) out << "threshold " << t << "\n";
  out << absl::StrFormat("duration %.3f -> %.3f us, ratio %s, p=%.3g (%d vs %d samples)\n",
                         d.baseline_us(), d.candidate_us(), RatioText(d), d.p_value(),
                         d.baseline_samples_us_size(), d.candidate_samples_us_size());
  out << "bound " << (c.baseline_bound().empty() ? "-" : c.baseline_bound()) << " -> "
      << (c.candidate_bound().empty() ? "-" : c.candidate_bound())
      << (c.bound_changed() ? "  (changed)" : "") << "\n";
  out << "per-core " << (c.baseline_balance().empty() ? "-" : c.baseline_balance()) << " -> "
      << (c.candidate_balance().empty() ? "-" : c.candidate_balance())
      << (c.balance_changed() ? "  (changed)" : "") << "\n";
  out << "dvfs " << c.baseline_dvfs() << " -> " << c.candidate_dvfs() << "\n";
  for (const auto& f : c.fingerprint_differences()) {
    out << "fingerprint " << f.field() << ": " << f.baseline() << " -> " << f.candidate()
        << (f.blocking() ? "  (blocking)" : "  (informative)") << "\n";
  }
  int notable = 0;
  for (const auto& m : c.metric_deltas()) {
    if (!m.notable()) continue;
    if (notable++ == 0) out << "notable metric changes:\n";
    out << absl::StrFormat("  %-22s %-28s %12.4g -> %-12.4g (%+.4g)\n", m.group(), m.field(),
                           m.baseline(), m.candidate(), m.delta());
  }
  for (const auto& f : c.flags()) out << "flag " << f << "\n";
}

// The JSON envelope: schema, exit code and summary around the proto3 JSON
// of the response.
void PrintEnvelope(const char* schema, const std::string& kind,
                   const google::protobuf::Message& result, int exit_code,
                   const std::string& summary, const nlohmann::json& extra, std::ostream& out) {
  nlohmann::json j = extra.is_object() ? extra : nlohmann::json::object();
  j["schema"] = schema;
  j["kind"] = kind;
  j["exit_code"] = exit_code;
  j["summary"] = summary;
  j["result"] = nlohmann::json::parse(ToJson(result));
  out << j.dump(2) << "\n";
}

v1::ComparisonCounts CountsOfOne(v1::Verdict v) {
  v1::ComparisonCounts n;
  n.set_matched(1);
  switch (v) {
    case v1::VERDICT_IMPROVED:
      n.set_improved(1);
      n.set_comparable(1);
      break;
    case v1::VERDICT_REGRESSED:
      n.set_regressed(1);
      n.set_comparable(1);
      break;
    case v1::VERDICT_STABLE:
      n.set_stable(1);
      n.set_comparable(1);
      break;
    case v1::VERDICT_INSUFFICIENT: n.set_insufficient(1); break;
    case v1::VERDICT_NOT_COMPARABLE: n.set_not_comparable(1); break;
    default: n.set_errored(1); break;
  }
  return n;
}

}  // namespace

bool IsRoundId(const std::string& id, int64_t* out) {
  return !id.empty() && absl::c_all_of(id, absl::ascii_isdigit) && absl::SimpleAtoi(id, out) &&
         *out > 0;
}

int ExitCodeOf(const v1::ComparisonCounts& n) {
  if (n.regressed() > 0) return kExitRegressed;
  if (n.comparable() == 0 || n.insufficient() > 0 || n.not_comparable() > 0 || n.errored() > 0) {
    return kExitNoVerdict;
  }
  return kExitOk;
}

int ExitCodeOf(const v1::ComparisonCounts& n, FailOn fail_on) {
  switch (fail_on) {
    case FailOn::kNever: return kExitOk;
    case FailOn::kRegressed: return n.regressed() > 0 ? kExitRegressed : kExitOk;
    default: return ExitCodeOf(n);
  }
}

absl::StatusOr<int64_t> ParseSince(const std::string& since, int64_t now_ms) {
  google::protobuf::Timestamp t;
  if (TimeUtil::FromString(since, &t)) return TimeUtil::TimestampToMilliseconds(t);
  if (auto back = ParseDurationText(since); back.ok()) return now_ms - back->count();
  return absl::InvalidArgumentError(
      absl::StrCat("--since '", since, "': want an RFC 3339 time or <n>s|m|h|d"));
}

namespace {

// The format compare and regressions print in: their own --format, else
// the global one.
VerdictFormat FormatOf(const VerdictArgs& v, const ClientConfig& c) {
  if (v.format != VerdictFormat::kDefault) return v.format;
  return c.format == OutputFormat::kJson ? VerdictFormat::kJson : VerdictFormat::kText;
}

// The settings errors are reported with: JSON exactly when the verdicts are.
ClientConfig ErrorConfig(const Session& s, const VerdictArgs& v) {
  ClientConfig c = s.config();
  c.format = FormatOf(v, c) == VerdictFormat::kJson ? OutputFormat::kJson : OutputFormat::kText;
  return c;
}

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

// What one command found, in every format it can print.
struct Verdicts {
  Verdicts(const char* s, std::string k, const google::protobuf::Message& r)
      : schema(s), kind(std::move(k)), result(&r) {}

  VerdictReport report;                     // counts, rows, title, summary
  const char* schema;                       // of the JSON envelope
  std::string kind;                         // "rounds", "collections", "regressions"
  const google::protobuf::Message* result;  // the response, for JSON
  std::function<void(std::ostream&)> text;  // the text rendering
  // What the exit code is decided on, when not report.counts (regressions:
  // only new regressions, and drifts that began in the window, count as
  // regressed).
  std::optional<v1::ComparisonCounts> exit_counts;
  // Keys added to the JSON envelope (compare --confirm of two rounds:
  // "confirmations").
  nlohmann::json extra;
};

// Prints v in the chosen format; returns the exit code after --fail-on.
int Emit(Session& s, const VerdictArgs& args, Verdicts v, std::ostream& out) {
  v.report.exit_code = ExitCodeOf(v.exit_counts.value_or(v.report.counts), args.fail_on);
  switch (FormatOf(args, s.config())) {
    case VerdictFormat::kJson:
      PrintEnvelope(v.schema, v.kind, *v.result, v.report.exit_code, v.report.summary, v.extra,
                    out);
      break;
    case VerdictFormat::kJunit: out << JunitXml(v.report, s.clock().SystemNow()); break;
    case VerdictFormat::kMarkdown: out << MarkdownComment(v.report); break;
    case VerdictFormat::kHtml: out << ComparisonHtml(v.report); break;
    default: v.text(out);
  }
  return v.report.exit_code;
}

int CompareRounds(Session& s, int64_t baseline, int64_t candidate, const VerdictArgs& v,
                  std::ostream& out, std::ostream& err) {
  grpc::ClientContext ctx;
  s.Prepare(&ctx);
  v1::CompareRoundsRequest req;
  req.set_baseline_round_id(baseline);
  req.set_candidate_round_id(candidate);
  *req.mutable_options() = OptionsOf(v);
  v1::CompareRoundsResponse resp;
  const absl::Status st = FromGrpcStatus(s.queries().CompareRounds(&ctx, req, &resp));
  if (!st.ok()) return ReportError(st, ErrorConfig(s, v), out, err);
  Verdicts found(kCompareSchema, "rounds", resp);
  found.report.title = absl::StrCat("npuperf compare ", baseline, " ", candidate);
  found.report.counts = CountsOfOne(resp.comparison().verdict());
  found.report.summary = CountsSummary(found.report.counts);
  found.report.comparisons = {resp.comparison()};
  google::protobuf::RepeatedPtrField<v1::Confirmation> confirmations;
  const v1::Verdict verdict = resp.comparison().verdict();
  if (v.confirm && (verdict == v1::VERDICT_REGRESSED || verdict == v1::VERDICT_IMPROVED)) {
    grpc::ClientContext cctx;
    s.Prepare(&cctx);
    v1::RequestConfirmationRequest creq;
    creq.set_baseline_round_id(baseline);
    creq.set_candidate_round_id(candidate);
    *creq.mutable_options() = OptionsOf(v);
    v1::RequestConfirmationResponse cresp;
    absl::Status cst = FromGrpcStatus(s.queries().RequestConfirmation(&cctx, creq, &cresp));
    if (cst.ok()) {
      *confirmations.Add() = cresp.confirmation();
      cst = WaitForConfirmations(s, &confirmations, v.confirm_timeout, err);
    }
    if (!cst.ok()) return ReportError(cst, ErrorConfig(s, v), out, err);
    absl::StrAppend(&found.report.summary, "; ", ConfirmationSummary(confirmations));
    if (NotConfirmed(confirmations, baseline, candidate)) {
      found.exit_counts = CountsOfOne(v1::VERDICT_STABLE);
    }
    found.extra["confirmations"] = nlohmann::json::array();
    for (const v1::Confirmation& c : confirmations) {
      found.extra["confirmations"].push_back(nlohmann::json::parse(ToJson(c)));
    }
  }
  found.text = [&resp, &confirmations](std::ostream& o) {
    PrintRoundComparison(resp.comparison(), o);
    PrintConfirmationLines(confirmations, o);
  };
  return Emit(s, v, std::move(found), out);
}

void PrintCollectionComparison(const std::string& baseline, const std::string& candidate,
                               const v1::CompareCollectionsResponse& resp, std::ostream& out) {
  out << "baseline " << baseline << " -> candidate " << candidate << "\n";
  PrintComparisonTable(resp.comparisons(), out);
  for (const auto& u : resp.unmatched()) out << "unmatched " << u << "\n";
  out << CountsSummary(resp.counts()) << "\n";
  if (resp.geomean_ratio() > 0) {
    out << absl::StrFormat(
        "geomean duration ratio %.3f over %d comparable cases (below 1 is faster)\n",
        resp.geomean_ratio(), resp.counts().comparable());
  }
}

int CompareCollections(Session& s, const std::string& baseline, const std::string& candidate,
                       const VerdictArgs& v, std::ostream& out, std::ostream& err) {
  grpc::ClientContext ctx;
  s.Prepare(&ctx);
  v1::CompareCollectionsRequest req;
  req.set_baseline_collection_id(baseline);
  req.set_candidate_collection_id(candidate);
  *req.mutable_options() = OptionsOf(v);
  req.set_confirm(v.confirm);
  v1::CompareCollectionsResponse resp;
  absl::Status st = FromGrpcStatus(s.queries().CompareCollections(&ctx, req, &resp));
  if (st.ok() && v.confirm) {
    st = WaitForConfirmations(s, resp.mutable_confirmations(), v.confirm_timeout, err);
  }
  if (!st.ok()) return ReportError(st, ErrorConfig(s, v), out, err);
  Verdicts found(kCompareSchema, "collections", resp);
  VerdictReport& r = found.report;
  r.title = absl::StrCat("npuperf compare ", baseline, " ", candidate);
  r.counts = resp.counts();
  r.summary = CountsSummary(r.counts);
  r.comparisons.assign(resp.comparisons().begin(), resp.comparisons().end());
  r.unmatched.assign(resp.unmatched().begin(), resp.unmatched().end());
  r.geomean_ratio = resp.geomean_ratio();
  if (v.confirm) {
    absl::StrAppend(&r.summary, "; ", ConfirmationSummary(resp.confirmations()));
    // A regression its reruns did not reproduce fails no bot.
    found.exit_counts = r.counts;
    for (const v1::RoundComparison& c : resp.comparisons()) {
      if (c.verdict() == v1::VERDICT_REGRESSED &&
          NotConfirmed(resp.confirmations(), c.baseline_round_id(), c.candidate_round_id())) {
        found.exit_counts->set_regressed(found.exit_counts->regressed() - 1);
      }
    }
  }
  found.text = [&](std::ostream& o) {
    PrintCollectionComparison(baseline, candidate, resp, o);
    PrintConfirmationLines(resp.confirmations(), o);
  };
  return Emit(s, v, std::move(found), out);
}

int CompareMany(Session& s, const std::string& baseline, const std::vector<std::string>& candidates,
                const VerdictArgs& v, std::ostream& out, std::ostream& err) {
  grpc::ClientContext ctx;
  s.Prepare(&ctx);
  v1::CompareManyRequest req;
  req.set_baseline_collection_id(baseline);
  for (const std::string& c : candidates) req.add_candidate_collection_ids(c);
  *req.mutable_options() = OptionsOf(v);
  v1::CompareManyResponse resp;
  const absl::Status st = FromGrpcStatus(s.queries().CompareMany(&ctx, req, &resp));
  if (!st.ok()) return ReportError(st, ErrorConfig(s, v), out, err);
  Verdicts found(kCompareSchema, "many", resp);
  VerdictReport& r = found.report;
  r.title = absl::StrCat("npuperf compare ", baseline, " ", absl::StrJoin(candidates, " "));
  r.counts = resp.counts();
  r.summary =
      absl::StrCat(CountsSummary(r.counts), " over ", resp.candidates_size(), " candidates");
  for (const v1::CandidateComparison& c : resp.candidates()) {
    r.comparisons.insert(r.comparisons.end(), c.comparison().comparisons().begin(),
                         c.comparison().comparisons().end());
    for (const std::string& u : c.comparison().unmatched()) {
      r.unmatched.push_back(absl::StrCat(c.candidate_collection_id(), ": ", u));
    }
  }
  found.text = [&resp, &baseline, summary = r.summary](std::ostream& o) {
    for (const v1::CandidateComparison& c : resp.candidates()) {
      PrintCollectionComparison(baseline, c.candidate_collection_id(), c.comparison(), o);
    }
    o << "all candidates: " << summary << "\n";
  };
  return Emit(s, v, std::move(found), out);
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

}  // namespace

int RunCompare(Session& s, const std::string& baseline, const std::string& candidate,
               const VerdictArgs& v, std::ostream& out, std::ostream& err) {
  int64_t base_round = 0, cand_round = 0;
  const bool rounds = IsRoundId(baseline, &base_round);
  if (rounds != IsRoundId(candidate, &cand_round)) {
    return ReportUsage("compare", "give two round ids or two collection ids", ErrorConfig(s, v),
                       out, err);
  }
  return rounds ? CompareRounds(s, base_round, cand_round, v, out, err)
                : CompareCollections(s, baseline, candidate, v, out, err);
}

int RunCompareMany(Session& s, const std::string& baseline,
                   const std::vector<std::string>& candidates, const VerdictArgs& v,
                   std::ostream& out, std::ostream& err) {
  if (candidates.size() == 1) return RunCompare(s, baseline, candidates[0], v, out, err);
  int64_t id = 0;
  bool any_round = IsRoundId(baseline, &id);
  for (const std::string& c : candidates) any_round |= IsRoundId(c, &id);
  if (any_round || candidates.empty()) {
    return ReportUsage("compare",
                       "several candidates need collection ids (one baseline collection)",
                       ErrorConfig(s, v), out, err);
  }
  if (v.confirm) {
    return ReportUsage("compare", "--confirm takes one candidate", ErrorConfig(s, v), out, err);
  }
  return CompareMany(s, baseline, candidates, v, out, err);
}

namespace {

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

int RunRegressions(Session& s, const RegressionsArgs& a, std::ostream& out, std::ostream& err) {
  auto req = RegressionsRequest(a, s.clock().SystemNow());
  if (!req.ok()) {
    return ReportUsage("regressions", std::string(req.status().message()),
                       ErrorConfig(s, a.verdict), out, err);
  }
  grpc::ClientContext ctx;
  s.Prepare(&ctx);
  v1::ListRegressionsResponse resp;
  absl::Status st = FromGrpcStatus(s.queries().ListRegressions(&ctx, *req, &resp));
  if (st.ok() && a.verdict.confirm) {
    st = WaitForConfirmations(s, resp.mutable_confirmations(), a.verdict.confirm_timeout, err);
  }
  if (!st.ok()) return ReportError(st, ErrorConfig(s, a.verdict), out, err);
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
  found.text = [&resp, summary = r.summary, precision = a.precision](std::ostream& o) {
    if (resp.regressions_size() > 0) PrintComparisonTable(resp.regressions(), o);
    PrintTriageLines(resp, precision, o);
    PrintConfirmationLines(resp.confirmations(), o);
    PrintDrifts(resp, o);
    o << summary << "\n";
  };
  return Emit(s, a.verdict, std::move(found), out);
}

int RunBaselinePin(Session& s, const std::string& label, const std::string& target,
                   std::ostream& out, std::ostream& err) {
  v1::PinBaselineRequest req;
  req.set_label(label);
  int64_t round = 0;
  if (IsRoundId(target, &round)) {
    req.set_round_id(round);
  } else {
    req.set_collection_id(target);
  }
  grpc::ClientContext ctx;
  s.Prepare(&ctx);
  v1::PinBaselineResponse resp;
  const absl::Status st = FromGrpcStatus(s.queries().PinBaseline(&ctx, req, &resp));
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  if (s.config().format == OutputFormat::kJson) {
    out << ToJson(resp) << "\n";
  } else {
    out << "baseline " << resp.label() << " = "
        << (resp.round_id() > 0 ? absl::StrCat("round ", resp.round_id())
                                : absl::StrCat("collection ", resp.collection_id()))
        << "\n";
  }
  return kExitOk;
}

namespace {

int ReportRound(Session& s, int64_t round_id, ReportStyle style, std::ostream& out,
                std::ostream& err) {
  auto round = FetchRound(s, round_id);
  if (!round.ok()) return ReportError(round.status(), s.config(), out, err);
  const v1::Evidence& e = round->evidence();
  if (style == ReportStyle::kJson) {
    out << (e.evidence_json().empty() ? ToJson(*round) : e.evidence_json());
    return kExitOk;
  }
  const std::string& text =
      style == ReportStyle::kMarkdown ? e.summary_markdown() : e.summary_text();
  if (text.empty()) {
    err << "npuperf report: round " << round_id << " carries no rendered summary\n";
    return kExitError;
  }
  out << text << "\n";
  return kExitOk;
}

void PrintCollectionReport(const std::string& id, const v1::ListRoundsResponse& rounds,
                           const v1::GetGoldenReportResponse& golden, ReportStyle style,
                           std::ostream& out) {
  if (style == ReportStyle::kJson) {
    nlohmann::json j;
    j["rounds"] = nlohmann::json::parse(ToJson(rounds));
    j["golden"] = nlohmann::json::parse(ToJson(golden));
    out << j.dump(2) << "\n";
    return;
  }
  const bool md = style == ReportStyle::kMarkdown;
  PrintRoundsReport(id, rounds, md, out);
  if (golden.cases_size() > 0) {
    out << (md ? "\n" : "")
        << absl::StrFormat("golden reference ratio geomean %.3f over %d cases — %s\n",
                           golden.geomean_ratio(), golden.cases_size(), golden.label());
  }
}

int ReportCollection(Session& s, const std::string& id, ReportStyle style, std::ostream& out,
                     std::ostream& err) {
  grpc::ClientContext ctx;
  s.Prepare(&ctx);
  v1::ListRoundsRequest req;
  req.set_collection_id(id);
  req.set_page_size(1000);
  v1::ListRoundsResponse rounds;
  const absl::Status st = FromGrpcStatus(s.queries().ListRounds(&ctx, req, &rounds));
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  grpc::ClientContext golden_ctx;
  s.Prepare(&golden_ctx);
  v1::GetGoldenReportRequest greq;
  greq.set_collection_id(id);
  v1::GetGoldenReportResponse golden;
  const absl::Status gst = FromGrpcStatus(s.queries().GetGoldenReport(&golden_ctx, greq, &golden));
  if (!gst.ok()) return ReportError(gst, s.config(), out, err);
  PrintCollectionReport(id, rounds, golden, style, out);
  return kExitOk;
}

}  // namespace

int RunReport(Session& s, const std::string& id, ReportStyle style, std::ostream& out,
              std::ostream& err) {
  if (style == ReportStyle::kHtml) return RunHtmlReport(s, id, out, err);
  int64_t round_id = 0;
  if (IsRoundId(id, &round_id)) return ReportRound(s, round_id, style, out, err);
  return ReportCollection(s, id, style, out, err);
}

}  // namespace npuperf::client
