// UiServer's pages: what each reads (through ReadQueries and
// ComparisonQueries, scoped to the session's team) and which report/
// renderer draws it.
#include <algorithm>
#include <map>
#include <set>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "report/report.h"
#include "server/compare/canaries.h"
#include "server/compare/comparator.h"
#include "server/core/health_rules.h"
#include "server/core/limits.h"
#include "server/ui/ui_rules.h"
#include "server/ui/ui_server.h"

namespace npuperf::server::ui {
namespace {

// Rows of each table on /ui/devices (the newest).
constexpr int32_t kDevicesPageRows = 100;

using Rounds = std::vector<v1::Round>;
using Links = std::vector<std::pair<std::string, std::string>>;

// The navigation of the team-wide pages (start, bisections, devices).
Links MainNav() {
  return {{"/ui/", "start"}, {"/ui/bisections", "bisections"}, {"/ui/devices", "devices"}};
}

// The newest collections on the start page, and those whose rounds it lists.
constexpr int32_t kIndexCollections = 20;
constexpr int kIndexRoundCollections = 5;
constexpr size_t kIndexRounds = 50;

bool IsDecimal(std::string_view s) { return !s.empty() && absl::c_all_of(s, absl::ascii_isdigit); }

absl::StatusOr<std::string> RequiredParam(const HttpRequest& req, const char* name) {
  const std::string* v = req.Param(name);
  if (v == nullptr || v->empty())
    return absl::InvalidArgumentError(absl::StrCat(name, ": missing"));
  return *v;
}

std::string CountsSummary(const v1::ComparisonCounts& n) {
  return absl::StrCat(n.matched(), " matched, ", n.comparable(), " comparable: ", n.improved(),
                      " improved, ", n.regressed(), " regressed, ", n.stable(), " stable, ",
                      n.insufficient(), " insufficient, ", n.not_comparable(), " not comparable, ",
                      n.errored(), " errored; ", n.unmatched(), " unmatched");
}

// Counts of one comparison (a round against a round).
v1::ComparisonCounts CountsOf(const v1::RoundComparison& c) {
  v1::ComparisonCounts n;
  CountVerdict(c.verdict(), &n);
  return n;
}

}  // namespace

absl::StatusOr<std::string> UiServer::RenderPage(const std::string& team, const HttpRequest& req) {
  const std::string& p = req.path;
  if (p == "/ui" || p == "/ui/") return IndexPage(team);
  if (absl::StartsWith(p, "/ui/rounds/")) return RoundPage(team, p.substr(11));
  if (absl::StartsWith(p, "/ui/collections/")) return CollectionPage(team, p.substr(16));
  if (p == "/ui/compare") return ComparePage(team, req);
  if (p == "/ui/history") return HistoryPage(team, req);
  if (p == "/ui/bisections") return BisectionsPage(team, "");
  if (absl::StartsWith(p, "/ui/bisections/")) return BisectionsPage(team, p.substr(15));
  if (p == "/ui/devices") return DevicesPage(team);
  return absl::NotFoundError(absl::StrCat("no page ", p));
}

absl::StatusOr<Rounds> UiServer::AllRounds(const std::string& team, v1::ListRoundsRequest req) {
  Rounds out;
  req.set_page_size(kMaxRoundsPage);
  for (int page = 0; page < kMaxUiRoundPages; ++page) {
    auto resp = reads_.ListRounds(team, req);
    if (!resp.ok()) return resp.status();
    for (auto& r : *resp->mutable_rounds()) out.push_back(std::move(r));
    if (resp->next_page_token().empty()) break;
    req.set_page_token(resp->next_page_token());
  }
  return out;
}

absl::StatusOr<std::string> UiServer::IndexPage(const std::string& team) {
  v1::ListCollectionsRequest list;
  list.set_page_size(kIndexCollections);
  auto collections = reads_.ListCollections(team, list);
  if (!collections.ok()) return collections.status();
  std::vector<v1::Collection> cs(collections->collections().begin(),
                                 collections->collections().end());
  Rounds rounds;
  for (int i = 0; i < kIndexRoundCollections && i < static_cast<int>(cs.size()); ++i) {
    v1::ListRoundsRequest req;
    req.set_collection_id(cs[i].id());
    req.set_page_size(static_cast<int32_t>(kIndexRounds));
    auto got = reads_.ListRounds(team, req);
    if (!got.ok()) return got.status();
    rounds.insert(rounds.end(), got->rounds().begin(), got->rounds().end());
  }
  std::sort(rounds.begin(), rounds.end(),
            [](const auto& a, const auto& b) { return a.id() > b.id(); });
  if (rounds.size() > kIndexRounds) rounds.resize(kIndexRounds);
  return report::WithNav(report::RenderIndexPage(team, cs, rounds), MainNav());
}

absl::StatusOr<std::string> UiServer::RoundPage(const std::string& team, const std::string& id) {
  auto round_id = ParseRoundId("round id", id);
  if (!round_id.ok()) return round_id.status();
  v1::GetRoundRequest req;
  req.set_round_id(*round_id);
  auto got = reads_.GetRound(team, req);
  if (!got.ok()) return got.status();
  const v1::Round& r = got->round();
  Links nav = {{"/ui/", "start"},
               {"/ui/collections/" + report::UrlComponent(r.collection_id()),
                "collection " + r.collection_id()},
               {"/ui/history?op=" + report::UrlComponent(r.operator_name()) +
                    "&case=" + report::UrlComponent(r.case_id()),
                "history of " + r.operator_name()}};
  if (r.evidence().has_timeline()) {
    const int64_t anchor = r.evidence().timeline().anchor_round_id();
    nav.push_back(
        {"/ui/rounds/" + std::to_string(anchor), "formal round " + std::to_string(anchor)});
  } else {
    // The instruction timelines of this round (npuperf timeline), newest first.
    v1::ListRoundsRequest timelines;
    timelines.set_operator_name(r.operator_name());
    (*timelines.mutable_labels())[kTimelineOfLabel] = std::to_string(r.id());
    timelines.set_page_size(5);
    auto found = reads_.ListRounds(team, timelines);
    if (!found.ok()) return found.status();
    for (const v1::Round& t : found->rounds()) {
      nav.push_back({"/ui/rounds/" + std::to_string(t.id()), "timeline " + std::to_string(t.id())});
    }
  }
  return report::WithNav(report::RenderRoundPage(r), nav);
}

absl::StatusOr<std::string> UiServer::CollectionPage(const std::string& team,
                                                     const std::string& id) {
  if (id.empty()) return absl::InvalidArgumentError("collection id: missing");
  v1::Collection all;
  v1::CollectionSpec spec;  // the first page's: later pages carry none
  google::protobuf::RepeatedPtrField<v1::Job> jobs;
  v1::GetCollectionRequest req;
  req.set_collection_id(id);
  do {
    auto page = reads_.GetCollection(team, req);
    if (!page.ok()) return page.status();
    for (auto& j : *page->mutable_collection()->mutable_jobs()) *jobs.Add() = std::move(j);
    if (req.job_page_token().empty()) spec = std::move(*page->mutable_collection()->mutable_spec());
    all = std::move(*page->mutable_collection());
    req.set_job_page_token(page->next_job_page_token());
  } while (!req.job_page_token().empty() && jobs.size() < all.counts().total());
  *all.mutable_jobs() = std::move(jobs);
  *all.mutable_spec() = std::move(spec);
  std::set<std::string> operators;
  for (const v1::Job& j : all.jobs()) operators.insert(j.operator_name());
  Rounds history;
  Links links = {{"/ui/", "start"}};
  for (const std::string& op : operators) {
    v1::ListRoundsRequest rounds;
    rounds.set_operator_name(op);
    auto got = AllRounds(team, rounds);
    if (!got.ok()) return got.status();
    history.insert(history.end(), got->begin(), got->end());
    links.emplace_back("/ui/history?op=" + report::UrlComponent(op), "history of " + op);
  }
  for (const v1::Job& j : all.jobs()) {
    if (j.round_id() > 0) {
      links.emplace_back("/ui/rounds/" + std::to_string(j.round_id()),
                         absl::StrCat("round ", j.round_id()));
    }
  }
  return report::WithNav(report::RenderCollectionPage(all, history), links);
}

absl::StatusOr<std::string> UiServer::ComparePage(const std::string& team, const HttpRequest& req) {
  auto a = RequiredParam(req, "a");
  if (!a.ok()) return a.status();
  auto b = RequiredParam(req, "b");
  if (!b.ok()) return b.status();
  report::ComparisonPage page;
  page.title = absl::StrCat("npuperf compare ", *a, " ", *b);
  if (IsDecimal(*a) != IsDecimal(*b)) {
    return absl::InvalidArgumentError("b: compare two round ids or two collection ids");
  }
  if (IsDecimal(*a)) {
    auto base = ParseRoundId("a", *a);
    if (!base.ok()) return base.status();
    auto cand = ParseRoundId("b", *b);
    if (!cand.ok()) return cand.status();
    v1::CompareRoundsRequest r;
    r.set_baseline_round_id(*base);
    r.set_candidate_round_id(*cand);
    auto got = comparisons_.CompareRounds(team, r);
    if (!got.ok()) return got.status();
    page.counts = CountsOf(got->comparison());
    page.comparisons.push_back(got->comparison());
    for (auto [id, json] : {std::pair{*base, &page.baseline_evidence_json},
                            std::pair{*cand, &page.candidate_evidence_json}}) {
      v1::GetRoundRequest rr;
      rr.set_round_id(id);
      auto round = reads_.GetRound(team, rr);
      if (!round.ok()) return round.status();
      *json = round->round().evidence().evidence_json();
    }
  } else {
    v1::CompareCollectionsRequest r;
    r.set_baseline_collection_id(*a);
    r.set_candidate_collection_id(*b);
    auto got = comparisons_.CompareCollections(team, r);
    if (!got.ok()) return got.status();
    page.counts = got->counts();
    page.comparisons.assign(got->comparisons().begin(), got->comparisons().end());
    page.unmatched.assign(got->unmatched().begin(), got->unmatched().end());
    page.geomean_ratio = got->geomean_ratio();
  }
  page.summary = CountsSummary(page.counts);
  return report::WithNav(report::RenderComparisonPage(page), {{"/ui/", "start"}});
}

absl::StatusOr<std::string> UiServer::HistoryPage(const std::string& team, const HttpRequest& req) {
  auto op = RequiredParam(req, "op");
  if (!op.ok()) return op.status();
  const std::string* case_param = req.Param("case");
  // Checked here so that the message names the page's parameters, not
  // ListRounds' fields.
  if (op->size() > kMaxOperatorNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("op: longer than ", kMaxOperatorNameBytes, " bytes"));
  }
  if (case_param != nullptr && case_param->size() > kMaxCaseIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("case: longer than ", kMaxCaseIdBytes, " bytes"));
  }
  v1::ListRoundsRequest list;
  list.set_operator_name(*op);
  if (case_param != nullptr) list.set_case_id(*case_param);
  auto rounds = AllRounds(team, list);
  if (!rounds.ok()) return rounds.status();
  std::map<std::string, Rounds> by_case;
  for (v1::Round& r : *rounds) by_case[r.case_id()].push_back(std::move(r));
  report::HistoryPage page;
  page.operator_name = *op;
  int verdicts = 0;
  for (auto& [case_id, rs] : by_case) {
    std::sort(rs.begin(), rs.end(), [](const auto& x, const auto& y) { return x.id() < y.id(); });
    // Each round against its predecessor, newest first, up to the bound.
    for (size_t i = rs.size(); i-- > 1 && verdicts < kMaxHistoryVerdicts; ++verdicts) {
      v1::CompareRoundsRequest c;
      c.set_baseline_round_id(rs[i - 1].id());
      c.set_candidate_round_id(rs[i].id());
      auto got = comparisons_.CompareRounds(team, c);
      if (!got.ok()) return got.status();
      page.verdicts.push_back(got->comparison());
    }
    page.rounds.insert(page.rounds.end(), rs.begin(), rs.end());
  }
  return report::WithNav(report::RenderHistoryPage(page), {{"/ui/", "start"}});
}

absl::StatusOr<std::string> UiServer::BisectionsPage(const std::string& team,
                                                     const std::string& id) {
  const Links nav = MainNav();
  if (id.empty()) {
    auto list = store_.ListBisections(team, /*include_finished=*/true, kIndexCollections);
    if (!list.ok()) return list.status();
    std::vector<v1::Bisection> bs;
    for (BisectionRecord& r : *list) bs.push_back(std::move(r.bisection));
    return report::WithNav(report::RenderBisectionsPage(team, bs), nav);
  }
  auto bisection_id = ParseRoundId("bisection id", id);
  if (!bisection_id.ok()) return bisection_id.status();
  auto rec = store_.GetBisection(team, *bisection_id);
  if (!rec.ok()) return rec.status();
  return report::WithNav(report::RenderBisectionPage(rec->bisection), nav);
}

absl::StatusOr<std::string> UiServer::DevicesPage(const std::string& team) {
  const bool admin = CheckDeviceAdmin(Principal{PrincipalKind::kTeam, team}, auth_.required(),
                                      options_.device_admins)
                         .ok();
  auto quarantines = store_.ListQuarantines(/*include_released=*/true, kDevicesPageRows);
  if (!quarantines.ok()) return quarantines.status();
  CanaryFilter f;
  f.limit = kDevicesPageRows;
  auto canaries = store_.ListCanaries(f);
  if (!canaries.ok()) return canaries.status();
  std::vector<v1::DeviceQuarantine> qs;
  for (const QuarantineRecord& q : *quarantines) {
    qs.push_back(QuarantineToProto(q));
    if (!admin) qs.back().clear_host();
  }
  std::vector<v1::Canary> cs;
  for (const CanaryRecord& c : *canaries) {
    cs.push_back(CanaryToProto(c));
    if (!admin) cs.back().clear_host();
  }
  return report::WithNav(report::RenderDevicesPage(qs, cs), MainNav());
}

}  // namespace npuperf::server::ui
