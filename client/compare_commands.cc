#include "client/compare_commands.h"

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/confirm_commands.h"
#include "client/format.h"
#include "client/noise_commands.h"
#include "client/verdict_output.h"
#include "nlohmann/json.hpp"

// compare (two rounds, two collections, one baseline collection and many
// candidates), baseline pin and the bot exit codes; what they print is
// verdict_output.h's.
namespace npuperf::client {
namespace {

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
  google::protobuf::RepeatedPtrField<v1::RoundComparison> one;
  *one.Add() = c;
  PrintSuspectHint(one, out);
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

namespace {

int CompareRounds(Session& s, int64_t baseline, int64_t candidate, const VerdictArgs& v,
                  std::ostream& out, std::ostream& err) {
  v1::CompareRoundsRequest req;
  req.set_baseline_round_id(baseline);
  req.set_candidate_round_id(candidate);
  *req.mutable_options() = OptionsOf(v);
  v1::CompareRoundsResponse resp;
  const absl::Status st = s.Call(&Queries::CompareRounds, req, &resp);
  if (!st.ok()) return ReportError(st, ErrorConfig(s, v), out, err);
  Verdicts found(kCompareSchema, "rounds", resp);
  found.report.title = absl::StrCat("npuperf compare ", baseline, " ", candidate);
  found.report.counts = CountsOfOne(resp.comparison().verdict());
  found.report.summary = CountsSummary(found.report.counts);
  found.report.comparisons = {resp.comparison()};
  google::protobuf::RepeatedPtrField<v1::Confirmation> confirmations;
  const v1::Verdict verdict = resp.comparison().verdict();
  if (v.confirm && (verdict == v1::VERDICT_REGRESSED || verdict == v1::VERDICT_IMPROVED)) {
    v1::RequestConfirmationRequest creq;
    creq.set_baseline_round_id(baseline);
    creq.set_candidate_round_id(candidate);
    *creq.mutable_options() = OptionsOf(v);
    v1::RequestConfirmationResponse cresp;
    absl::Status cst = s.Call(&Queries::RequestConfirmation, creq, &cresp);
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
  v1::CompareCollectionsRequest req;
  req.set_baseline_collection_id(baseline);
  req.set_candidate_collection_id(candidate);
  *req.mutable_options() = OptionsOf(v);
  req.set_confirm(v.confirm);
  v1::CompareCollectionsResponse resp;
  absl::Status st = s.Call(&Queries::CompareCollections, req, &resp);
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
  v1::CompareManyRequest req;
  req.set_baseline_collection_id(baseline);
  for (const std::string& c : candidates) req.add_candidate_collection_ids(c);
  *req.mutable_options() = OptionsOf(v);
  v1::CompareManyResponse resp;
  const absl::Status st = s.Call(&Queries::CompareMany, req, &resp);
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
  v1::PinBaselineResponse resp;
  const absl::Status st = s.Call(&Queries::PinBaseline, req, &resp);
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

}  // namespace npuperf::client
