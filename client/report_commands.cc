#include "client/report_commands.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/compare_commands.h"
#include "client/format.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "nlohmann/json.hpp"
#include "report/report.h"

namespace npuperf::client {
namespace {

using Rounds = std::vector<v1::Round>;

// The rounds of a ListRounds query, oldest first, at most kMaxHistoryPages
// pages (each its own call and deadline).
absl::StatusOr<Rounds> AllRounds(Session& s, v1::ListRoundsRequest req) {
  Rounds out;
  req.set_page_size(1000);
  for (int page = 0; page < kMaxHistoryPages; ++page) {
    v1::ListRoundsResponse resp;
    const absl::Status st = s.Call(&Queries::ListRounds, req, &resp);
    if (!st.ok()) return st;
    for (auto& r : *resp.mutable_rounds()) out.push_back(std::move(r));
    if (resp.next_page_token().empty()) break;
    req.set_page_token(resp.next_page_token());
  }
  return out;
}

// Every round of the collection's operators, for the sparklines.
absl::StatusOr<Rounds> OperatorHistory(Session& s, const v1::Collection& c) {
  std::set<std::string> operators;
  for (const v1::Job& j : c.jobs()) operators.insert(j.operator_name());
  Rounds all;
  for (const std::string& op : operators) {
    v1::ListRoundsRequest req;
    req.set_operator_name(op);
    auto rounds = AllRounds(s, req);
    if (!rounds.ok()) return rounds.status();
    all.insert(all.end(), rounds->begin(), rounds->end());
  }
  return all;
}

}  // namespace

int RunHtmlReport(Session& s, const std::string& id, std::ostream& out, std::ostream& err) {
  int64_t round_id = 0;
  if (IsRoundId(id, &round_id)) {
    auto round = FetchRound(s, round_id);
    if (!round.ok()) return ReportError(round.status(), s.config(), out, err);
    out << report::RenderRoundPage(*round);
    return kExitOk;
  }
  auto c = FetchCollection(s, id);
  if (!c.ok()) return ReportError(c.status(), s.config(), out, err);
  auto history = OperatorHistory(s, *c);
  if (!history.ok()) return ReportError(history.status(), s.config(), out, err);
  out << report::RenderCollectionPage(*c, *history);
  return kExitOk;
}

std::string ComparisonHtml(const VerdictReport& r) {
  report::ComparisonPage p;
  p.title = r.title;
  p.summary = r.summary;
  p.comparisons = r.comparisons;
  p.counts = r.counts;
  p.unmatched = r.unmatched;
  p.geomean_ratio = r.geomean_ratio;
  return report::RenderComparisonPage(p);
}

namespace {

// The rounds of one case, id order.
using ByCase = std::map<std::string, Rounds>;

ByCase GroupByCase(Rounds rounds) {
  ByCase out;
  for (v1::Round& r : rounds) out[r.case_id()].push_back(std::move(r));
  for (auto& [id, rs] : out) {
    std::sort(rs.begin(), rs.end(), [](const auto& a, const auto& b) { return a.id() < b.id(); });
  }
  return out;
}

// The baseline rounds of the operator: one round, or a collection's.
absl::StatusOr<Rounds> BaselineRounds(Session& s, const HistoryArgs& a, std::string* name) {
  if (a.baseline.empty()) return Rounds{};
  int64_t round_id = 0;
  if (IsRoundId(a.baseline, &round_id)) {
    auto r = FetchRound(s, round_id);
    if (!r.ok()) return r.status();
    if (r->operator_name() != a.operator_name) {
      return absl::InvalidArgumentError(absl::StrCat("--baseline: round ", round_id,
                                                     " is of operator '", r->operator_name(),
                                                     "', not '", a.operator_name, "'"));
    }
    *name = absl::StrCat("baseline round ", round_id);
    return Rounds{*std::move(r)};
  }
  v1::ListRoundsRequest req;
  req.set_collection_id(a.baseline);
  req.set_operator_name(a.operator_name);
  req.set_case_id(a.case_id);
  *name = "baseline collection " + a.baseline;
  return AllRounds(s, req);
}

// One CompareRounds per kept round: against the case's baseline, else
// against its predecessor among all of the case's rounds.
absl::StatusOr<std::vector<v1::RoundComparison>> Verdicts(Session& s, const ByCase& all,
                                                          const Rounds& baseline, int last) {
  std::map<std::string, int64_t> base_of;
  for (const v1::Round& b : baseline) base_of[b.case_id()] = b.id();
  std::vector<v1::RoundComparison> out;
  for (const auto& [case_id, rounds] : all) {
    const size_t first = rounds.size() > static_cast<size_t>(last) ? rounds.size() - last : 0;
    for (size_t i = first; i < rounds.size(); ++i) {
      const auto pinned = base_of.find(case_id);
      const int64_t base = pinned != base_of.end() ? pinned->second
                           : i > 0                 ? rounds[i - 1].id()
                                                   : 0;
      if (base == 0 || base == rounds[i].id()) continue;
      v1::CompareRoundsRequest req;
      req.set_baseline_round_id(base);
      req.set_candidate_round_id(rounds[i].id());
      v1::CompareRoundsResponse resp;
      const absl::Status st = s.Call(&Queries::CompareRounds, req, &resp);
      if (!st.ok()) return st;
      out.push_back(std::move(*resp.mutable_comparison()));
    }
  }
  return out;
}

void PrintHistoryText(const report::HistoryPage& p, std::ostream& out) {
  std::map<int64_t, const v1::RoundComparison*> verdict_of;
  for (const auto& v : p.verdicts) verdict_of[v.candidate_round_id()] = &v;
  std::set<int64_t> pinned;
  for (const auto& b : p.baseline) pinned.insert(b.id());
  const ByCase cases = GroupByCase(p.rounds);
  for (const auto& [case_id, rounds] : cases) {
    out << p.operator_name << (case_id.empty() ? "" : "/" + case_id) << "\n";
    out << absl::StrFormat("  %-8s %-20s %12s  %-14s %-15s %s\n", "round", "created", "kernel_us",
                           "bound", "verdict", "labels");
    for (const v1::Round& r : rounds) {
      const auto v = verdict_of.find(r.id());
      const std::string verdict = pinned.count(r.id()) > 0 ? "baseline"
                                  : v != verdict_of.end()
                                      ? report::VerdictText(v->second->verdict())
                                      : "-";
      std::string labels;
      for (const auto& [k, val] :
           std::map<std::string, std::string>(r.labels().begin(), r.labels().end())) {
        labels += (labels.empty() ? "" : ",") + k + "=" + val;
      }
      out << absl::StrFormat(
          "  %-8d %-20s %12.3f  %-14s %-15s %s\n", r.id(),
          google::protobuf::util::TimeUtil::ToString(r.created_at()).substr(0, 19) + "Z",
          r.evidence().duration().aggregate_us(), r.evidence().bound().label(), verdict, labels);
    }
  }
  if (!p.baseline_name.empty()) out << "verdicts against " << p.baseline_name << "\n";
}

void PrintHistoryJson(const report::HistoryPage& p, std::ostream& out) {
  nlohmann::json j;
  j["schema"] = "npuperf.history.v1";
  j["operator_name"] = p.operator_name;
  j["baseline"] = p.baseline_name;
  for (const char* key : {"rounds", "baseline_rounds", "verdicts"})
    j[key] = nlohmann::json::array();
  for (const auto& r : p.rounds) j["rounds"].push_back(nlohmann::json::parse(ToJson(r)));
  for (const auto& r : p.baseline) j["baseline_rounds"].push_back(nlohmann::json::parse(ToJson(r)));
  for (const auto& v : p.verdicts) j["verdicts"].push_back(nlohmann::json::parse(ToJson(v)));
  out << j.dump(2) << "\n";
}

}  // namespace

int RunHistory(Session& s, const HistoryArgs& a, std::ostream& out, std::ostream& err) {
  if (a.last < 1 || a.last > kMaxHistoryRounds) {
    return ReportUsage("history", absl::StrCat("--last must be in 1..", kMaxHistoryRounds),
                       s.config(), out, err);
  }
  v1::ListRoundsRequest req;
  req.set_operator_name(a.operator_name);
  req.set_case_id(a.case_id);
  auto rounds = AllRounds(s, req);
  if (!rounds.ok()) return ReportError(rounds.status(), s.config(), out, err);
  report::HistoryPage page;
  page.operator_name = a.operator_name;
  auto baseline = BaselineRounds(s, a, &page.baseline_name);
  if (!baseline.ok()) return ReportError(baseline.status(), s.config(), out, err);
  page.baseline = *std::move(baseline);
  const ByCase all = GroupByCase(*std::move(rounds));
  auto verdicts = Verdicts(s, all, page.baseline, a.last);
  if (!verdicts.ok()) return ReportError(verdicts.status(), s.config(), out, err);
  page.verdicts = *std::move(verdicts);
  for (const auto& [case_id, rs] : all) {
    const size_t first = rs.size() > static_cast<size_t>(a.last) ? rs.size() - a.last : 0;
    page.rounds.insert(page.rounds.end(), rs.begin() + static_cast<std::ptrdiff_t>(first),
                       rs.end());
  }
  if (s.config().format == OutputFormat::kJson) {
    PrintHistoryJson(page, out);
  } else if (a.style == "html") {
    out << report::RenderHistoryPage(page);
  } else {
    PrintHistoryText(page, out);
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
  v1::ListRoundsRequest req;
  req.set_collection_id(id);
  req.set_page_size(1000);
  v1::ListRoundsResponse rounds;
  const absl::Status st = s.Call(&Queries::ListRounds, req, &rounds);
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  v1::GetGoldenReportRequest greq;
  greq.set_collection_id(id);
  v1::GetGoldenReportResponse golden;
  const absl::Status gst = s.Call(&Queries::GetGoldenReport, greq, &golden);
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
