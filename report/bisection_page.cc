// The bisection pages of the server's web pages (report.h, "In the browser"):
// the team's bisections, and one with its culprits, revisions and runs.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/html.h"
#include "report/page_util.h"
#include "report/report.h"

namespace npuperf::report {
namespace {

std::string StateText(v1::BisectionState s) {
  const std::string n = v1::BisectionState_Name(s);
  return n.rfind("BISECTION_STATE_", 0) == 0 ? n.substr(16) : n;
}

std::string Short(const std::string& commit) { return commit.substr(0, 12); }

std::string JudgementText(const v1::BisectionJudgement& j) {
  if (j.relation().empty()) return "";
  std::string out = absl::StrFormat("x%.3f", j.ratio());
  if (j.ratio_ci_low() > 0) {
    absl::StrAppend(&out, absl::StrFormat(" [%.3f, %.3f]", j.ratio_ci_low(), j.ratio_ci_high()));
  }
  absl::StrAppend(&out, " ", j.relation(), " (", j.rule(), ")");
  return out;
}

std::string CulpritsSection(const v1::Bisection& b) {
  if (b.culprits_size() == 0) return Para("no culprit named (yet)");
  std::string body;
  for (const v1::BisectionCulprit& c : b.culprits()) {
    std::string part =
        Para(absl::StrCat(Short(c.commit()), " \"", c.subject(), "\" by ", c.author(), ": ",
                          JudgementText(c.judgement()), " against ", Short(c.parent_commit())));
    if (c.candidates_size() > 1) {
      std::vector<std::string> shorts;
      for (const std::string& h : c.candidates()) shorts.push_back(Short(h));
      part += Para("equally possible (skipped revisions between): " + absl::StrJoin(shorts, ", "),
                   "note");
    }
    if (c.changed_files_size() > 0) {
      part += Para("changed: " + absl::StrJoin(c.changed_files(), ", "));
    }
    if (c.has_explanation()) {
      const v1::RoundComparison& e = c.explanation();
      const std::string base = std::to_string(c.parent_round_id());
      const std::string cand = std::to_string(c.culprit_round_id());
      part +=
          "<p>standard rounds " + Link("/ui/rounds/" + base, base) + " → " +
          Link("/ui/rounds/" + cand, cand) + ": " +
          Link("/ui/compare?a=" + base + "&b=" + cand, "the comparison") +
          Escape(absl::StrCat("; bound ", e.baseline_bound(), " → ", e.candidate_bound(),
                              "; balance ", e.baseline_balance(), " → ", e.candidate_balance())) +
          "</p>";
      std::vector<std::vector<Cell>> rows;
      for (const v1::MetricDelta& d : e.metric_deltas()) {
        if (!d.notable()) continue;
        rows.push_back({d.group() + "." + d.field(), Cell(Num(d.baseline(), 4), "num"),
                        Cell(Num(d.candidate(), 4), "num"), Cell(Num(d.delta(), 4), "num")});
      }
      if (!rows.empty()) {
        part += Table("deltas", {"notable metric", "parent", "culprit", "delta"}, rows);
      }
    } else if (!c.explanation_note().empty()) {
      part += Para("not explained: " + c.explanation_note(), "note");
    }
    body += "<div class=\"culprit\">" + part + "</div>";
  }
  return body;
}

std::string RevisionsTable(const v1::Bisection& b) {
  std::vector<std::vector<Cell>> rows;
  for (int i = 0; i < b.revisions_size(); ++i) {
    const v1::BisectionRevision& r = b.revisions(i);
    bool culprit = false;
    for (const v1::BisectionCulprit& c : b.culprits()) culprit = culprit || c.revision() == i;
    rows.push_back({Cell(std::to_string(i), "num"), Short(r.commit()), r.subject(),
                    Cell(std::to_string(r.runs()) +
                             (r.in_flight() > 0 ? " +" + std::to_string(r.in_flight()) : ""),
                         "num"),
                    Cell(r.runs() > 0 ? Num(r.median_us(), 3) : "", "num"),
                    Cell(r.failed() ? "skipped (a run failed)"
                         : culprit  ? "culprit"
                                    : "",
                         r.failed() ? "warning"
                         : culprit  ? "critical"
                                    : "")});
  }
  return Table("revisions", {"#", "commit", "subject", "runs", "median us", ""}, rows);
}

std::string StepsTable(const v1::Bisection& b) {
  std::vector<std::vector<Cell>> rows;
  for (const v1::BisectionStep& s : b.steps()) {
    const std::string commit = s.revision() >= 0 && s.revision() < b.revisions_size()
                                   ? Short(b.revisions(s.revision()).commit())
                                   : "?";
    std::string state = v1::CollectionState_Name(s.state());
    if (state.rfind("COLLECTION_STATE_", 0) == 0) state = state.substr(17);
    rows.push_back({s.purpose(), commit,
                    RawCell(Link("/ui/collections/" + s.collection_id(), s.collection_id())), state,
                    s.round_id() > 0 ? RawCell(Link("/ui/rounds/" + std::to_string(s.round_id()),
                                                    std::to_string(s.round_id())))
                                     : Cell(""),
                    s.reason()});
  }
  return rows.empty()
             ? Para("no runs yet")
             : Table("steps", {"run", "commit", "collection", "state", "round", "why"}, rows);
}

}  // namespace

std::string RenderBisectionsPage(const std::string& team, const std::vector<v1::Bisection>& list) {
  std::vector<std::vector<Cell>> rows;
  for (const v1::Bisection& b : list) {
    const std::string id = std::to_string(b.id());
    std::vector<std::string> culprits;
    for (const v1::BisectionCulprit& c : b.culprits()) culprits.push_back(Short(c.commit()));
    rows.push_back({RawCell(Link("/ui/bisections/" + id, id)),
                    b.operator_name() + (b.case_id().empty() ? "" : "/" + b.case_id()),
                    StateText(b.state()),
                    Cell(std::to_string(std::max(0, b.revisions_size() - 1)), "num"),
                    absl::StrJoin(culprits, ", "), internal::Time(b.created_at()), b.reason()});
  }
  const std::string body =
      rows.empty()
          ? Para("no bisections yet: npuperf bisect starts one")
          : Table("bisections",
                  {"bisection", "operator", "state", "commits", "culprits", "created", "reason"},
                  rows);
  return Page("bisections", "npuperf: bisections of team " + team,
              "commit ranges searched for the commit that moved a kernel's time", body);
}

std::string RenderBisectionPage(const v1::Bisection& b) {
  std::string body = Para(absl::StrCat(StateText(b.state()), ": ", b.reason()));
  if (b.has_ends()) {
    body += Para(absl::StrCat(
        "ends: ", JudgementText(b.ends()),
        b.step_pct() > 0 ? absl::StrFormat("; a step is at least %.1f%%", b.step_pct()) : ""));
  }
  body += Section("culprits", "Culprits", CulpritsSection(b));
  if (b.undecided_size() > 0) {
    std::vector<std::vector<Cell>> rows;
    for (const v1::BisectionJudgement& u : b.undecided()) {
      rows.push_back({Cell(std::to_string(u.from_revision()), "num"),
                      Cell(std::to_string(u.to_revision()), "num"), u.rule()});
    }
    body +=
        Section("undecided", "Undecided pairs", Table("undecided", {"from", "to", "rule"}, rows));
  }
  body += Section("revisions", "Revisions", RevisionsTable(b));
  body += Section("steps", "Runs", StepsTable(b));
  return Page("bisection",
              absl::StrCat("bisection ", b.id(), " of ", b.operator_name(),
                           b.case_id().empty() ? "" : "/" + b.case_id()),
              absl::StrCat(std::max(0, b.revisions_size() - 1), " commits of ", b.repository()),
              body);
}

}  // namespace npuperf::report
