#include "server/compare/comparison_queries.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "server/compare/device_suspects.h"
#include "server/compare/round_reads.h"
#include "server/core/confirmation_rules.h"
#include "server/core/constants.h"
#include "server/core/job_state.h"
#include "server/core/limits.h"
#include "server/core/request_rules.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

// "key=value" with both parts non-empty.
bool SplitLabel(const std::string& label, std::string* key, std::string* value) {
  const size_t eq = label.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == label.size()) return false;
  *key = label.substr(0, eq);
  *value = label.substr(eq + 1);
  return true;
}

}  // namespace

ComparisonQueries::ComparisonQueries(Store& store, Clock& clock, Confirmations* confirmations)
    : store_(store), clock_(clock), confirmations_(confirmations), triage_(store, clock) {}

absl::Status ComparisonQueries::RequireFinished(const std::string& team,
                                                const std::string& collection_id,
                                                const std::string& field) {
  if (collection_id.size() > kMaxCollectionIdBytes) {
    return InvalidArgumentWithFields({{field, "at most 64 bytes"}});
  }
  auto collection = store_.GetCollectionPage(team, collection_id, 0, 0);
  if (!collection.ok()) return collection.status();
  if (IsTerminal(collection->state())) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(field, ": collection ", collection_id, " has not finished (",
                   collection->counts().succeeded() + collection->counts().failed() +
                       collection->counts().cancelled(),
                   " of ", collection->counts().total(), " jobs done); wait for it"));
}

absl::StatusOr<NoiseBook> ComparisonQueries::NoiseOf(
    const std::string& team, const VerdictOptions& options,
    const std::vector<const std::vector<v1::Round>*>& rounds) {
  std::set<std::string> keys;
  for (const auto* side : rounds) {
    for (const v1::Round& r : *side) keys.insert(CaseKey(r));
  }
  return NoiseOfCases(store_, team, keys, options);
}

absl::StatusOr<std::vector<v1::Round>> ComparisonQueries::CollectionRounds(
    const std::string& team, const std::string& collection_id) {
  auto collection = store_.GetCollectionPage(team, collection_id, 0, 0);
  if (!collection.ok()) return collection.status();
  return RoundsOfCollection(store_, team, collection_id);
}

absl::StatusOr<std::vector<v1::Round>> ComparisonQueries::NewestPerCase(RoundFilter filter) {
  filter.newest_first = true;
  filter.limit = kComparisonPage;
  std::set<std::string> seen;
  std::vector<v1::Round> out;
  size_t scanned = 0;
  while (scanned < kMaxComparisonScan) {
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
  const std::vector<v1::Round> cases = {*candidate};
  auto noise = NoiseOf(team, *options, {&cases});
  if (!noise.ok()) return noise.status();
  options->noise = &*noise;
  v1::CompareRoundsResponse resp;
  *resp.mutable_comparison() = server::CompareRounds(*baseline, *candidate, *options);
  if (absl::Status s = FlagSuspectRounds(store_, *baseline, *candidate, resp.mutable_comparison());
      !s.ok()) {
    return s;
  }
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
  for (const auto& [field, id] :
       {std::pair{"baseline_collection_id", &req.baseline_collection_id()},
        {"candidate_collection_id", &req.candidate_collection_id()}}) {
    if (absl::Status s = RequireFinished(team, *id, field); !s.ok()) return s;
  }
  auto baseline = CollectionRounds(team, req.baseline_collection_id());
  if (!baseline.ok()) return baseline.status();
  auto candidate = CollectionRounds(team, req.candidate_collection_id());
  if (!candidate.ok()) return candidate.status();
  auto noise = NoiseOf(team, *options, {&*candidate});
  if (!noise.ok()) return noise.status();
  options->noise = &*noise;
  v1::CompareCollectionsResponse resp = CompareRoundSets(*baseline, *candidate, *options);
  if (absl::Status s =
          FlagSuspectRounds(store_, {&*baseline, &*candidate}, resp.mutable_comparisons());
      !s.ok()) {
    return s;
  }
  if (req.confirm()) {
    absl::Status s = ConfirmEach(team, resp.comparisons(), *baseline, *candidate, req.options(),
                                 resp.mutable_confirmations());
    if (!s.ok()) return s;
  }
  return resp;
}

absl::StatusOr<v1::RequestConfirmationResponse> ComparisonQueries::RequestConfirmation(
    const std::string& team, const v1::RequestConfirmationRequest& req) {
  if (confirmations_ == nullptr) {
    return absl::FailedPreconditionError("this server does not run confirmations");
  }
  return confirmations_->Request(team, req);
}

absl::StatusOr<v1::GetConfirmationResponse> ComparisonQueries::GetConfirmation(
    const std::string& team, const v1::GetConfirmationRequest& req) {
  if (confirmations_ == nullptr) {
    return absl::FailedPreconditionError("this server does not run confirmations");
  }
  return confirmations_->Get(team, req);
}

absl::Status ComparisonQueries::ConfirmEach(
    const std::string& team,
    const google::protobuf::RepeatedPtrField<v1::RoundComparison>& comparisons,
    const std::vector<v1::Round>& baseline, const std::vector<v1::Round>& candidates,
    const v1::CompareOptions& options, google::protobuf::RepeatedPtrField<v1::Confirmation>* out) {
  if (confirmations_ == nullptr) {
    return absl::FailedPreconditionError("confirm: this server does not run confirmations");
  }
  std::map<int64_t, const v1::Round*> by_id;
  for (const auto* side : {&baseline, &candidates}) {
    for (const v1::Round& r : *side) by_id[r.id()] = &r;
  }
  int requested = 0;
  for (const v1::RoundComparison& cmp : comparisons) {
    if (!Confirmable(cmp.verdict())) continue;
    auto b = by_id.find(cmp.baseline_round_id());
    auto c = by_id.find(cmp.candidate_round_id());
    if (b == by_id.end() || c == by_id.end()) {
      return absl::InternalError(absl::StrCat("confirm: rounds of ", cmp.operator_name(), "/",
                                              cmp.case_id(), " not among those compared"));
    }
    if (requested == kMaxConfirmationsPerRequest) {
      v1::Confirmation* left = out->Add();
      left->set_baseline_round_id(cmp.baseline_round_id());
      left->set_candidate_round_id(cmp.candidate_round_id());
      left->set_operator_name(cmp.operator_name());
      left->set_case_id(cmp.case_id());
      left->set_original_verdict(cmp.verdict());
      left->set_original_rule(cmp.rule());
      left->set_state(v1::CONFIRMATION_STATE_UNCONFIRMED);
      left->set_reason(absl::StrCat("not requested: one call confirms at most ",
                                    kMaxConfirmationsPerRequest,
                                    " comparisons; use RequestConfirmation (npuperf confirm)"));
      continue;
    }
    ++requested;
    auto made = confirmations_->Confirm(team, *b->second, *c->second, cmp, options, 0);
    if (!made.ok()) return made.status();
    *out->Add() = std::move(made->first);
  }
  return absl::OkStatus();
}

namespace {

void CheckCompareMany(const v1::CompareManyRequest& req, std::vector<FieldViolation>& bad) {
  if (req.baseline_collection_id().empty()) bad.push_back({"baseline_collection_id", "required"});
  const int n = req.candidate_collection_ids_size();
  if (n < 1 || n > kMaxCompareCandidates) {
    bad.push_back({"candidate_collection_ids", absl::StrCat("1..", kMaxCompareCandidates, " ids")});
  }
  std::set<std::string> seen;
  for (int i = 0; i < n && i < kMaxCompareCandidates; ++i) {
    const std::string& id = req.candidate_collection_ids(i);
    const std::string field = absl::StrCat("candidate_collection_ids[", i, "]");
    if (id.empty() || id.size() > kMaxCollectionIdBytes) {
      bad.push_back({field, absl::StrCat("1..", kMaxCollectionIdBytes, " bytes")});
    } else if (id == req.baseline_collection_id()) {
      bad.push_back({field, "is the baseline"});
    } else if (!seen.insert(id).second) {
      bad.push_back({field, "listed twice"});
    }
  }
}

void AddCounts(const v1::ComparisonCounts& n, v1::ComparisonCounts* sum) {
  sum->set_matched(sum->matched() + n.matched());
  sum->set_comparable(sum->comparable() + n.comparable());
  sum->set_improved(sum->improved() + n.improved());
  sum->set_regressed(sum->regressed() + n.regressed());
  sum->set_stable(sum->stable() + n.stable());
  sum->set_insufficient(sum->insufficient() + n.insufficient());
  sum->set_not_comparable(sum->not_comparable() + n.not_comparable());
  sum->set_errored(sum->errored() + n.errored());
  sum->set_unmatched(sum->unmatched() + n.unmatched());
}

}  // namespace

absl::StatusOr<v1::CompareManyResponse> ComparisonQueries::CompareMany(
    const std::string& team, const v1::CompareManyRequest& req) {
  std::vector<FieldViolation> bad;
  CheckCompareMany(req, bad);
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  auto options = ResolveVerdictOptions(req.options());
  if (!options.ok()) return options.status();
  if (absl::Status s =
          RequireFinished(team, req.baseline_collection_id(), "baseline_collection_id");
      !s.ok()) {
    return s;
  }
  for (int i = 0; i < req.candidate_collection_ids_size(); ++i) {
    absl::Status s = RequireFinished(team, req.candidate_collection_ids(i),
                                     absl::StrCat("candidate_collection_ids[", i, "]"));
    if (!s.ok()) return s;
  }
  auto baseline = CollectionRounds(team, req.baseline_collection_id());
  if (!baseline.ok()) return baseline.status();
  // The candidates' cases are the baseline's where they match: its cases
  // name every spread a matched pair can use, in one read.
  auto noise = NoiseOf(team, *options, {&*baseline});
  if (!noise.ok()) return noise.status();
  options->noise = &*noise;
  v1::CompareManyResponse resp;
  for (const std::string& id : req.candidate_collection_ids()) {
    auto candidate = CollectionRounds(team, id);
    if (!candidate.ok()) return candidate.status();
    v1::CandidateComparison* c = resp.add_candidates();
    c->set_candidate_collection_id(id);
    *c->mutable_comparison() = CompareRoundSets(*baseline, *candidate, *options);
    if (absl::Status s = FlagSuspectRounds(store_, {&*baseline, &*candidate},
                                           c->mutable_comparison()->mutable_comparisons());
        !s.ok()) {
      return s;
    }
    AddCounts(c->comparison().counts(), resp.mutable_counts());
    if (resp.ByteSizeLong() > kMaxCompareManyBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("candidate_collection_ids: the comparisons of the first ",
                       resp.candidates_size(), " candidates already pass ",
                       kMaxCompareManyBytes >> 20, " MiB; compare fewer candidates per call"));
    }
  }
  return resp;
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
  if (!SplitLabel(req.label(), &key, &value) || req.label().size() > kMaxBaselineLabelBytes) {
    bad.push_back({"label", "must be key=value, at most 320 bytes"});
  }
  if (req.target_case() == v1::PinBaselineRequest::TARGET_NOT_SET ||
      (req.has_round_id() && req.round_id() <= 0) ||
      (req.has_collection_id() && req.collection_id().empty())) {
    bad.push_back({"target", "give a round_id or a collection_id"});
  }
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  if (req.has_collection_id()) {
    if (absl::Status s = RequireFinished(team, req.collection_id(), "collection_id"); !s.ok()) {
      return s;
    }
  }
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

absl::StatusOr<std::vector<v1::Round>> ComparisonQueries::RegressionCandidates(
    const std::string& team, const v1::ListRegressionsRequest& req, int64_t from_ms,
    const std::map<std::string, std::string>& labels) {
  if (!req.candidate_collection_id().empty()) {
    return CollectionRounds(team, req.candidate_collection_id());
  }
  RoundFilter f;
  f.team = team;
  f.operator_name = req.operator_name();
  f.labels = labels;
  f.since_ms = from_ms;
  return NewestPerCase(f);
}

absl::StatusOr<std::vector<v1::Round>> ComparisonQueries::Predecessors(
    const std::string& team, const std::vector<v1::Round>& candidates, int64_t before_ms) {
  std::vector<v1::Round> out;
  for (const v1::Round& c : candidates) {
    RoundFilter f;
    f.team = team;
    f.operator_name = c.operator_name();
    f.case_id = c.case_id();
    f.until_ms = before_ms;
    f.newest_first = true;
    f.limit = 1;
    auto page = store_.ListRounds(f);
    if (!page.ok()) return page.status();
    if (!page->rounds.empty()) out.push_back(std::move(page->rounds.front()));
  }
  return out;
}

absl::Status ComparisonQueries::PinnedPairs(const std::string& team,
                                            const v1::ListRegressionsRequest& req,
                                            RegressionPairs* pairs) {
  std::string key, value;
  SplitLabel(req.baseline_label(), &key, &value);
  auto pin = store_.GetBaseline(team, req.baseline_label());
  if (!pin.ok()) return pin.status();
  if (pin->round_id > 0) {
    auto r = store_.GetRound(team, pin->round_id);
    if (!r.ok()) return r.status();
    pairs->baseline.push_back(*std::move(r));
    pairs->description = absl::StrCat("baseline ", pin->label, " (round ", pin->round_id, ")");
  } else {
    auto rounds = CollectionRounds(team, pin->collection_id);
    if (!rounds.ok()) return rounds.status();
    pairs->baseline = *std::move(rounds);
    pairs->description =
        absl::StrCat("baseline ", pin->label, " (collection ", pin->collection_id, ")");
  }
  const int64_t from_ms =
      req.has_since() ? TimeUtil::TimestampToMilliseconds(req.since()) : pin->pinned_ms;
  auto candidates = RegressionCandidates(team, req, from_ms, {{key, value}});
  if (!candidates.ok()) return candidates.status();
  pairs->candidates = *std::move(candidates);
  std::set<int64_t> pinned;
  for (const auto& r : pairs->baseline) pinned.insert(r.id());
  std::erase_if(pairs->candidates, [&](const v1::Round& r) { return pinned.count(r.id()) > 0; });
  return absl::OkStatus();
}

absl::Status ComparisonQueries::SincePairs(const std::string& team,
                                           const v1::ListRegressionsRequest& req,
                                           RegressionPairs* pairs) {
  const int64_t since_ms = TimeUtil::TimestampToMilliseconds(req.since());
  auto candidates = RegressionCandidates(team, req, since_ms, {});
  if (!candidates.ok()) return candidates.status();
  pairs->candidates = *std::move(candidates);
  auto baseline = Predecessors(team, pairs->candidates, since_ms);
  if (!baseline.ok()) return baseline.status();
  pairs->baseline = *std::move(baseline);
  pairs->description = absl::StrCat("newest rounds before ", TimeUtil::ToString(req.since()));
  return absl::OkStatus();
}

absl::StatusOr<v1::ListRegressionsResponse> ComparisonQueries::ListRegressions(
    const std::string& team, const v1::ListRegressionsRequest& req) {
  std::vector<FieldViolation> bad;
  std::string key, value;
  if (!req.has_since() && req.baseline_label().empty()) {
    bad.push_back({"since", "give since or baseline_label"});
  }
  if (!req.baseline_label().empty() && (!SplitLabel(req.baseline_label(), &key, &value) ||
                                        req.baseline_label().size() > kMaxBaselineLabelBytes)) {
    bad.push_back({"baseline_label", "must be key=value, at most 320 bytes"});
  }
  if (req.has_since()) CheckTimestamp(req.since(), "since", bad);
  CheckLength(req.operator_name(), kMaxOperatorNameBytes, "operator_name", bad);
  CheckLength(req.candidate_collection_id(), kMaxCollectionIdBytes, "candidate_collection_id", bad);
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  if (!req.candidate_collection_id().empty()) {
    absl::Status s =
        RequireFinished(team, req.candidate_collection_id(), "candidate_collection_id");
    if (!s.ok()) return s;
  }
  auto options = ResolveVerdictOptions(req.options());
  if (!options.ok()) return options.status();
  RegressionPairs pairs;
  absl::Status s =
      req.baseline_label().empty() ? SincePairs(team, req, &pairs) : PinnedPairs(team, req, &pairs);
  if (!s.ok()) return s;
  if (!req.operator_name().empty()) {
    auto other = [&](const v1::Round& r) { return r.operator_name() != req.operator_name(); };
    std::erase_if(pairs.baseline, other);
    std::erase_if(pairs.candidates, other);
  }
  auto noise = NoiseOf(team, *options, {&pairs.candidates});
  if (!noise.ok()) return noise.status();
  options->noise = &*noise;
  v1::CompareCollectionsResponse all = CompareRoundSets(pairs.baseline, pairs.candidates, *options);
  if (absl::Status flagged = FlagSuspectRounds(store_, {&pairs.baseline, &pairs.candidates},
                                               all.mutable_comparisons());
      !flagged.ok()) {
    return flagged;
  }
  v1::ListRegressionsResponse resp;
  if (absl::Status t = triage_.TrackListing(team, req, pairs.candidates, all, &resp); !t.ok()) {
    return t;
  }
  // Only pairs are counted here: a baseline case without a newer round is
  // not "unmatched" for a regression listing.
  *resp.mutable_counts() = all.counts();
  resp.mutable_counts()->set_unmatched(0);
  resp.set_compared(all.counts().comparable());
  resp.set_baseline_description(pairs.description);
  if (req.baseline_label().empty()) {
    s = AddDrifts(team, pairs.candidates, TimeUtil::TimestampToMilliseconds(req.since()), *options,
                  &resp);
    if (!s.ok()) return s;
  }
  if (req.confirm()) {
    s = ConfirmEach(team, resp.regressions(), pairs.baseline, pairs.candidates, req.options(),
                    resp.mutable_confirmations());
    if (!s.ok()) return s;
  }
  return resp;
}

}  // namespace npuperf::server
