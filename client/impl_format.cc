#include "client/impl_format.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/format.h"
#include "common/status_util.h"
#include "report/report.h"

namespace npuperf::client {
namespace {

// "0.54", or "-" when the scope is absent.
std::string Ratio(double r) { return r > 0 ? absl::StrFormat("%.2f", r) : "-"; }

std::string ScopeText(const v1::ScopeComparison& s) {
  if (!(s.ratio() > 0)) return "-";
  std::string out = absl::StrFormat("%.3f", s.ratio());
  if (s.ratio_ci_low() > 0 && s.ratio_ci_high() > 0) {
    absl::StrAppend(&out, absl::StrFormat(" [%.3f, %.3f]", s.ratio_ci_low(), s.ratio_ci_high()));
  }
  return out;
}

std::string CaseName(const v1::ImplementationCase& c) {
  return c.case_id().empty() ? c.candidate_operator()
                             : absl::StrCat(c.candidate_operator(), "/", c.case_id());
}

// "OP=GROUP" lines (ParseGroups) as (key, value), with the line number.
struct KeyLine {
  std::string key, value;
  int line = 0;
};

absl::StatusOr<std::vector<KeyLine>> KeyValueLines(const std::string& text, const char* what) {
  std::vector<KeyLine> out;
  int n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++n;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    const size_t eq = line.find('=');
    KeyLine kl;
    kl.line = n;
    if (eq != absl::string_view::npos) {
      kl.key = std::string(absl::StripAsciiWhitespace(line.substr(0, eq)));
      kl.value = std::string(absl::StripAsciiWhitespace(line.substr(eq + 1)));
    }
    if (kl.key.empty() || kl.value.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("line ", n, ": want ", what));
    }
    out.push_back(std::move(kl));
  }
  return out;
}

// The failures of one job (empty when it passed).
std::string JobFailure(const v1::Job& job, const std::map<int64_t, const v1::Round*>& rounds) {
  const std::string at = job.case_id().empty() ? "" : absl::StrCat("case ", job.case_id(), ": ");
  if (job.state() != v1::JOB_STATE_SUCCEEDED) {
    return absl::StrCat(at, "job ", job.id(), " ", StateName(job.state()),
                        job.reason().empty() ? "" : ": ", job.reason());
  }
  auto it = rounds.find(job.round_id());
  if (it == rounds.end()) return absl::StrCat(at, "job ", job.id(), ": no round stored");
  std::vector<std::string> errors;
  for (const auto& e : it->second->evidence().errors()) {
    errors.push_back(absl::StrCat(e.code(), ": ", e.message()));
  }
  if (errors.empty()) return "";
  return absl::StrCat(at, "evidence errors: ", absl::StrJoin(errors, "; "));
}

void AddGroup(const std::string& name, const std::vector<const v1::ReleaseOperator*>& ops,
              v1::ReleaseGroup* g) {
  g->set_group(name);
  for (const auto* op : ops) {
    g->set_operators(g->operators() + 1);
    if (op->passed()) g->set_passed(g->passed() + 1);
  }
  g->set_pass_rate(g->operators() > 0 ? static_cast<double>(g->passed()) / g->operators() : 0);
}

// The operators of the collections, the last collection holding one winning.
std::map<std::string, v1::ReleaseOperator> ReleaseOperators(
    const std::vector<v1::Collection>& collections, const std::vector<v1::Round>& rounds) {
  std::map<int64_t, const v1::Round*> by_id;
  for (const v1::Round& r : rounds) by_id[r.id()] = &r;
  std::map<std::string, v1::ReleaseOperator> ops;
  for (const v1::Collection& c : collections) {
    std::map<std::string, v1::ReleaseOperator> here;
    for (const v1::Job& job : c.jobs()) {
      v1::ReleaseOperator& op = here[job.operator_name()];
      op.set_operator_name(job.operator_name());
      op.set_collection_id(c.id());
      op.set_jobs(op.jobs() + 1);
      const std::string failure = JobFailure(job, by_id);
      if (failure.empty()) op.set_passed_jobs(op.passed_jobs() + 1);
      if (!failure.empty()) op.add_failures(failure);
    }
    for (auto& [name, op] : here) {
      op.set_passed(op.jobs() > 0 && op.failures_size() == 0);
      ops[name] = std::move(op);
    }
  }
  return ops;
}

void TextOperators(const v1::CompareImplementationsResponse& r, std::string* out) {
  absl::StrAppend(out, absl::StrFormat("%-30s %-30s %9s %8s %8s  %s\n", "operator", "base operator",
                                       "scenarios", "core", "task", "Task Duration verdicts"));
  for (const auto& op : r.operators()) {
    const auto& n = op.task_duration_counts();
    absl::StrAppend(out, absl::StrFormat("%-30s %-30s %9d %8s %8s  %s\n", op.candidate_operator(),
                                         op.base_operator(), op.scenarios(), Ratio(op.core_ratio()),
                                         Ratio(op.task_duration_ratio()), CountsSummary(n)));
  }
  for (const auto* m : {&r.arithmetic_mean(), &r.geometric_mean()}) {
    absl::StrAppend(out, absl::StrFormat("%-72s %8s %8s  (%d / %d operators)\n", m->label(),
                                         Ratio(m->core_ratio()), Ratio(m->task_duration_ratio()),
                                         m->core_operators(), m->task_duration_operators()));
  }
}

void TextCases(const v1::CompareImplementationsResponse& r, std::string* out) {
  absl::StrAppend(out, "\n",
                  absl::StrFormat("%-36s %-30s %-12s %-26s %-12s %s\n", "operator/case",
                                  "core ratio [CI]", "core", "task ratio [CI]", "task", "rule"));
  for (const auto& c : r.cases()) {
    if (c.status() != v1::IMPLEMENTATION_CASE_COMPARED) continue;
    const auto& core = c.core();
    const bool has_core = core.ratio() > 0;
    const std::string core_text =
        has_core ? absl::StrCat(ScopeText(core), " ", core.base_core(), "->", core.candidate_core())
                 : "-";
    absl::StrAppend(
        out,
        absl::StrFormat("%-36s %-30s %-12s %-26s %-12s %s\n", CaseName(c), core_text,
                        has_core ? VerdictName(core.verdict()) : "-", ScopeText(c.task_duration()),
                        VerdictName(c.task_duration().verdict()), c.task_duration().rule()));
  }
}

void NotComparedLines(const v1::CompareImplementationsResponse& r, const char* bullet,
                      std::string* out) {
  for (const auto& c : r.cases()) {
    if (c.status() == v1::IMPLEMENTATION_CASE_COMPARED) continue;
    absl::StrAppend(out, bullet, CaseName(c), " vs ", c.base_operator(), ": ",
                    report::ImplementationStatusText(c.status()), ": ", c.reason(), "\n");
  }
  for (const auto& u : r.unpaired()) {
    absl::StrAppend(out, bullet, u.side(), " operator ", u.operator_name(),
                    ": UNPAIRED: ", u.reason(), "\n");
  }
}

// Markdown table cells: '|' and newlines would break the row.
std::string Md(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += (c == '\n' || c == '\r') ? ' ' : c;
    }
  }
  return out;
}

// A case as compare's comparison: its Task Duration scope (the core ratio in
// the rule), or ERRORED / NOT_COMPARABLE with its reason.
v1::RoundComparison AsRoundComparison(const v1::ImplementationCase& c) {
  v1::RoundComparison rc;
  rc.set_operator_name(c.candidate_operator());
  rc.set_case_id(c.case_id());
  rc.set_baseline_round_id(c.base_round_id());
  rc.set_candidate_round_id(c.candidate_round_id());
  *rc.mutable_fingerprint_differences() = c.fingerprint_differences();
  *rc.mutable_flags() = c.flags();
  if (c.status() != v1::IMPLEMENTATION_CASE_COMPARED) {
    rc.set_verdict(c.status() == v1::IMPLEMENTATION_CASE_ERRORED ? v1::VERDICT_ERRORED
                                                                 : v1::VERDICT_NOT_COMPARABLE);
    rc.set_rule(c.reason());
    return rc;
  }
  const auto& t = c.task_duration();
  rc.set_verdict(t.verdict());
  rc.set_rule(absl::StrCat(t.rule(), "; core ratio ", Ratio(c.core().ratio()),
                           c.core().ratio() > 0
                               ? absl::StrCat(" (", VerdictName(c.core().verdict()), ")")
                               : std::string()));
  auto* d = rc.mutable_duration();
  d->set_baseline_us(t.base_us());
  d->set_candidate_us(t.candidate_us());
  d->set_ratio(t.ratio());
  d->set_ratio_ci_low(t.ratio_ci_low());
  d->set_ratio_ci_high(t.ratio_ci_high());
  d->set_p_value(t.p_value());
  return rc;
}

}  // namespace

absl::StatusOr<v1::OperatorPair> ParsePairFlag(const std::string& text) {
  const size_t eq = text.find('=');
  v1::OperatorPair p;
  if (eq != std::string::npos) {
    p.set_candidate_operator(std::string(absl::StripAsciiWhitespace(text.substr(0, eq))));
    p.set_base_operator(std::string(absl::StripAsciiWhitespace(text.substr(eq + 1))));
  }
  if (p.candidate_operator().empty() || p.base_operator().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pair '", text, "': want CAND_OP=BASE_OP (candidate operator = base)"));
  }
  return p;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseGroups(
    const std::string& text) {
  auto lines = KeyValueLines(text, "OPERATOR=GROUP");
  if (!lines.ok()) return lines.status();
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> seen;
  for (const KeyLine& kl : *lines) {
    if (!seen.insert(kl.key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", kl.line, ": operator ", kl.key, " is given twice"));
    }
    out.emplace_back(kl.key, kl.value);
  }
  return out;
}

v1::ReleaseReport BuildReleaseReport(
    const std::vector<v1::Collection>& collections, const std::vector<v1::Round>& rounds,
    const std::vector<std::pair<std::string, std::string>>& groups) {
  v1::ReleaseReport out;
  for (const auto& c : collections) out.add_collection_ids(c.id());
  std::map<std::string, v1::ReleaseOperator> ops = ReleaseOperators(collections, rounds);
  std::map<std::string, std::string> group_of(groups.begin(), groups.end());
  std::vector<std::string> order;
  for (const auto& [op, g] : groups) {
    if (std::find(order.begin(), order.end(), g) == order.end()) order.push_back(g);
  }
  if (std::find(order.begin(), order.end(), kUngrouped) == order.end()) order.push_back(kUngrouped);
  std::map<std::string, std::vector<const v1::ReleaseOperator*>> members;
  for (auto& [name, op] : ops) {
    auto it = group_of.find(name);
    op.set_group(it == group_of.end() ? kUngrouped : it->second);
  }
  std::vector<const v1::ReleaseOperator*> all;
  for (const std::string& g : order) {
    for (const auto& [name, op] : ops) {
      if (op.group() == g) members[g].push_back(&op);
    }
    if (members[g].empty()) continue;
    AddGroup(g, members[g], out.add_groups());
    for (const auto* op : members[g]) {
      *out.add_operators() = *op;
      all.push_back(op);
    }
  }
  AddGroup("total", all, out.mutable_total());
  return out;
}

std::string ImplementationText(const v1::CompareImplementationsResponse& r) {
  std::string out = absl::StrCat("candidate ", r.candidate_collection_id(), " against base ",
                                 r.base_collection_id(), ": ", r.pairs_size(),
                                 " operator pairs; ratios candidate/base, below 1 is faster\n");
  TextOperators(r, &out);
  TextCases(r, &out);
  std::string missing;
  NotComparedLines(r, "  ", &missing);
  if (!missing.empty()) absl::StrAppend(&out, "\nnot compared:\n", missing);
  return out;
}

std::string ImplementationMarkdown(const std::string& title,
                                   const v1::CompareImplementationsResponse& r) {
  std::string out =
      absl::StrCat("### ", Md(title), "\n\n", "Candidate `", Md(r.candidate_collection_id()),
                   "` against base `", Md(r.base_collection_id()),
                   "`: candidate/base time ratios, below 1 the candidate is "
                   "faster.\n\n");
  absl::StrAppend(&out,
                  "| operator | base operator | scenarios | core (swimlane) | Task Duration "
                  "(profiling) |\n|---|---|---:|---:|---:|\n");
  for (const auto& op : r.operators()) {
    absl::StrAppend(&out, "| ", Md(op.candidate_operator()), " | ", Md(op.base_operator()), " | ",
                    op.scenarios(), " | ", Ratio(op.core_ratio()), " | ",
                    Ratio(op.task_duration_ratio()), " |\n");
  }
  for (const auto* m : {&r.arithmetic_mean(), &r.geometric_mean()}) {
    absl::StrAppend(&out, "| ", Md(m->label()), " | - | - | ", Ratio(m->core_ratio()), " | ",
                    Ratio(m->task_duration_ratio()), " |\n");
  }
  std::string missing;
  NotComparedLines(r, "- ", &missing);
  if (!missing.empty()) absl::StrAppend(&out, "\nNot compared:\n\n", missing);
  return out;
}

VerdictReport ImplementationVerdicts(const std::string& title,
                                     const v1::CompareImplementationsResponse& r) {
  VerdictReport v;
  v.title = title;
  v.counts = r.counts();
  v.summary = CountsSummary(r.counts());
  for (const auto& c : r.cases()) {
    if (c.status() == v1::IMPLEMENTATION_CASE_MISSING_BASE ||
        c.status() == v1::IMPLEMENTATION_CASE_MISSING_CANDIDATE) {
      v.unmatched.push_back(absl::StrCat(CaseName(c), " (", c.reason(), ")"));
    } else {
      v.comparisons.push_back(AsRoundComparison(c));
    }
  }
  for (const auto& u : r.unpaired()) {
    v.unmatched.push_back(
        absl::StrCat(u.side(), " operator ", u.operator_name(), " (", u.reason(), ")"));
  }
  return v;
}

std::string ReleaseMarkdown(const std::string& title, const v1::ReleaseReport& r) {
  std::string out = absl::StrCat(
      "## ", Md(title), "\n\nCollections: ", Md(absl::StrJoin(r.collection_ids(), ", ")), "\n\n",
      "| model group | operators | pass rate |\n|---|---:|---:|\n");
  for (const auto& g : r.groups()) {
    absl::StrAppend(&out, "| ", Md(g.group()), " | ", g.operators(), " | ",
                    absl::StrFormat("%.0f%%", 100 * g.pass_rate()), " |\n");
  }
  absl::StrAppend(&out, "| total | ", r.total().operators(), " | ",
                  absl::StrFormat("%.0f%%", 100 * r.total().pass_rate()), " |\n");
  std::string failed;
  for (const auto& op : r.operators()) {
    for (const auto& f : op.failures()) {
      absl::StrAppend(&failed, "- ", Md(op.operator_name()), " (", Md(op.group()), "): ", Md(f),
                      "\n");
    }
  }
  if (!failed.empty()) absl::StrAppend(&out, "\nDid not pass:\n\n", failed);
  for (const auto& impl : r.implementations()) {
    absl::StrAppend(
        &out, "\n",
        ImplementationMarkdown(absl::StrCat("Performance: ", impl.candidate_collection_id(),
                                            " against ", impl.base_collection_id()),
                               impl));
  }
  return out;
}

}  // namespace npuperf::client
