#include "server/comparison_queries.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

// Rounds read per store call; a collection or window is paged through.
constexpr int32_t kPage = 1000;
// Upper bound on rounds scanned for one regression listing.
constexpr size_t kMaxScanned = 200000;

std::string CaseKey(const v1::Round& r) { return absl::StrCat(r.operator_name(), "/", r.case_id()); }

// "key=value" with both parts non-empty.
bool SplitLabel(const std::string& label, std::string* key, std::string* value) {
  const size_t eq = label.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == label.size()) return false;
  *key = label.substr(0, eq);
  *value = label.substr(eq + 1);
  return true;
}

}  // namespace

ComparisonQueries::ComparisonQueries(Store& store, Clock& clock) : store_(store), clock_(clock) {}

absl::StatusOr<std::vector<v1::Round>> ComparisonQueries::CollectionRounds(
    const std::string& team, const std::string& collection_id) {
  auto collection = store_.GetCollection(team, collection_id);
  if (!collection.ok()) return collection.status();
  RoundFilter f;
  f.team = team;
  f.collection_id = collection_id;
  f.limit = kPage;
  std::vector<v1::Round> out;
  while (true) {
    auto page = store_.ListRounds(f);
    if (!page.ok()) return page.status();
    for (auto& r : page->rounds) out.push_back(std::move(r));
    if (page->last_id == 0) return out;
    f.after_id = page->last_id;
  }
}

absl::StatusOr<std::vector<v1::Round>> ComparisonQueries::NewestPerCase(RoundFilter filter) {
  filter.newest_first = true;
  filter.limit = kPage;
  std::set<std::string> seen;
  std::vector<v1::Round> out;
  size_t scanned = 0;
  while (scanned < kMaxScanned) {
    auto page = store_.ListRounds(filter);
    if (!page.ok()) return page.status();
    scanned += page->rounds.size();
    for (auto& r : page->rounds) {
      if (seen.insert(CaseKey(r)).second) out.push_back(std::move(r));
    }
    if (page->last_id == 0) break;
    filter.after_id = page->last_id;
  }
  return out;
}

absl::StatusOr<v1::CompareRoundsResponse> ComparisonQueries::CompareRounds(
    const std::string& team, const v1::CompareRoundsRequest& req) {
  std::vector<FieldViolation> bad;
  if (req.baseline_round_id() <= 0) bad.push_back({"baseline_round_id", "must be a round id"});
  if (req.candidate_round_id() <= 0) bad.push_back({"candidate_round_id", "must be a round id"});
  auto options = ResolveVerdictOptions(req.options());
  if (!options.ok()) return options.status();
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  auto baseline = store_.GetRound(team, req.baseline_round_id());
  if (!baseline.ok()) return baseline.status();
  auto candidate = store_.GetRound(team, req.candidate_round_id());
  if (!candidate.ok()) return candidate.status();
  v1::CompareRoundsResponse resp;
  *resp.mutable_comparison() = server::CompareRounds(*baseline, *candidate, *options);
  return resp;
}

absl::StatusOr<v1::CompareCollectionsResponse> ComparisonQueries::CompareCollections(
    const std::string& team, const v1::CompareCollectionsRequest& req) {
  std::vector<FieldViolation> bad;
  if (req.baseline_collection_id().empty()) bad.push_back({"baseline_collection_id", "required"});
  if (req.candidate_collection_id().empty()) bad.push_back({"candidate_collection_id", "required"});
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  auto options = ResolveVerdictOptions(req.options());
  if (!options.ok()) return options.status();
  auto baseline = CollectionRounds(team, req.baseline_collection_id());
  if (!baseline.ok()) return baseline.status();
  auto candidate = CollectionRounds(team, req.candidate_collection_id());
  if (!candidate.ok()) return candidate.status();
  return CompareRoundSets(*baseline, *candidate, *options);
}

absl::StatusOr<v1::GetGoldenReportResponse> ComparisonQueries::GetGoldenReport(
    const std::string& team, const v1::GetGoldenReportRequest& req) {
  if (req.collection_id().empty()) {
    return InvalidArgumentWithFields({{"collection_id", "required"}});
  }
  auto rounds = CollectionRounds(team, req.collection_id());
  if (!rounds.ok()) return rounds.status();
  return GoldenReport(*rounds);
}

absl::StatusOr<v1::PinBaselineResponse> ComparisonQueries::PinBaseline(
    const std::string& team, const v1::PinBaselineRequest& req) {
  std::vector<FieldViolation> bad;
  std::string key, value;
  if (!SplitLabel(req.label(), &key, &value)) bad.push_back({"label", "must be key=value"});
  if (req.target_case() == v1::PinBaselineRequest::TARGET_NOT_SET ||
      (req.has_round_id() && req.round_id() <= 0) ||
      (req.has_collection_id() && req.collection_id().empty())) {
    bad.push_back({"target", "give a round_id or a collection_id"});
  }
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  Baseline pin;
  pin.label = req.label();
  pin.round_id = req.has_round_id() ? req.round_id() : 0;
  pin.collection_id = req.has_collection_id() ? req.collection_id() : "";
  pin.pinned_ms = ToUnixMillis(clock_.SystemNow());
  auto stored = store_.PinBaseline(team, pin);
  if (!stored.ok()) return stored.status();
  v1::PinBaselineResponse resp;
  resp.set_label(stored->label);
  resp.set_round_id(stored->round_id);
  resp.set_collection_id(stored->collection_id);
  return resp;
}

absl::StatusOr<v1::ListRegressionsResponse> ComparisonQueries::ListRegressions(
    const std::string& team, const v1::ListRegressionsRequest& req) {
  std::vector<FieldViolation> bad;
  std::string key, value;
  if (!req.has_since() && req.baseline_label().empty()) {
    bad.push_back({"since", "give since or baseline_label"});
  }
  if (!req.baseline_label().empty() && !SplitLabel(req.baseline_label(), &key, &value)) {
    bad.push_back({"baseline_label", "must be key=value"});
  }
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  auto options = ResolveVerdictOptions(req.options());
  if (!options.ok()) return options.status();
  const int64_t since_ms = req.has_since() ? TimeUtil::TimestampToMilliseconds(req.since()) : 0;

  std::vector<v1::Round> baseline, candidates;
  std::string description;
  // Candidates: one collection, or the newest round per case in a window.
  auto load_candidates = [&](int64_t from_ms,
                             const std::map<std::string, std::string>& labels) -> absl::Status {
    if (!req.candidate_collection_id().empty()) {
      auto rounds = CollectionRounds(team, req.candidate_collection_id());
      if (!rounds.ok()) return rounds.status();
      candidates = *std::move(rounds);
      return absl::OkStatus();
    }
    RoundFilter f;
    f.team = team;
    f.operator_name = req.operator_name();
    f.labels = labels;
    f.since_ms = from_ms;
    auto rounds = NewestPerCase(f);
    if (!rounds.ok()) return rounds.status();
    candidates = *std::move(rounds);
    return absl::OkStatus();
  };

  if (!req.baseline_label().empty()) {
    auto pin = store_.GetBaseline(team, req.baseline_label());
    if (!pin.ok()) return pin.status();
    if (pin->round_id > 0) {
      auto r = store_.GetRound(team, pin->round_id);
      if (!r.ok()) return r.status();
      baseline.push_back(*std::move(r));
      description = absl::StrCat("baseline ", pin->label, " (round ", pin->round_id, ")");
    } else {
      auto rounds = CollectionRounds(team, pin->collection_id);
      if (!rounds.ok()) return rounds.status();
      baseline = *std::move(rounds);
      description = absl::StrCat("baseline ", pin->label, " (collection ", pin->collection_id, ")");
    }
    absl::Status s = load_candidates(req.has_since() ? since_ms : pin->pinned_ms, {{key, value}});
    if (!s.ok()) return s;
    std::set<int64_t> pinned;
    for (const auto& r : baseline) pinned.insert(r.id());
    std::erase_if(candidates, [&](const v1::Round& r) { return pinned.count(r.id()) > 0; });
  } else {
    absl::Status s = load_candidates(since_ms, {});
    if (!s.ok()) return s;
    for (const v1::Round& c : candidates) {
      RoundFilter f;
      f.team = team;
      f.operator_name = c.operator_name();
      f.case_id = c.case_id();
      f.until_ms = since_ms;
      f.newest_first = true;
      f.limit = 1;
      auto page = store_.ListRounds(f);
      if (!page.ok()) return page.status();
      if (!page->rounds.empty()) baseline.push_back(std::move(page->rounds.front()));
    }
    description = absl::StrCat("newest rounds before ", TimeUtil::ToString(req.since()));
  }
  if (!req.operator_name().empty()) {
    auto other = [&](const v1::Round& r) { return r.operator_name() != req.operator_name(); };
    std::erase_if(baseline, other);
    std::erase_if(candidates, other);
  }
  v1::CompareCollectionsResponse all = CompareRoundSets(baseline, candidates, *options);
  v1::ListRegressionsResponse resp;
  for (auto& cmp : *all.mutable_comparisons()) {
    if (cmp.verdict() == v1::VERDICT_REGRESSED) *resp.add_regressions() = std::move(cmp);
  }
  // Only pairs are counted here: a baseline case without a newer round is
  // not "unmatched" for a regression listing.
  *resp.mutable_counts() = all.counts();
  resp.mutable_counts()->set_unmatched(0);
  resp.set_compared(all.counts().comparable());
  resp.set_baseline_description(description);
  return resp;
}

}  // namespace npuperf::server
