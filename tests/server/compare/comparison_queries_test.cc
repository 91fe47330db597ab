// ComparisonQueries against real stores: SQLite always, PostgreSQL when
// NPUPERF_TEST_PG_URL is set (a schema of its own per test). Rounds are made
// the way agents make them: collection → claim → result.
#include "server/compare/comparison_queries.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/limits.h"
#include "server/core/scheduler.h"
#include "server/core/triage_rules.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/pg_schema.h"
#if NPUPERF_WITH_POSTGRES
#include <pqxx/pqxx>

#include "server/backends/postgres/postgres_store.h"
#endif

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

enum class Backend { kSqlite, kPostgres };

// Seven samples around `mean_us` with 1% noise (deterministic per seed).
std::vector<double> Samples(double mean_us, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> noise(mean_us, mean_us * 0.01);
  std::vector<double> out;
  for (int i = 0; i < 7; ++i) out.push_back(noise(gen));
  return out;
}

class ComparisonQueriesTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kSqlite) {
      auto s = SqliteStore::Open(":memory:");
      ASSERT_TRUE(s.ok()) << s.status();
      store_ = std::move(*s);
    } else {
#if NPUPERF_WITH_POSTGRES
      if (PgTestSchema::BaseUrl().empty()) GTEST_SKIP() << "NPUPERF_TEST_PG_URL is not set";
      pg_ = std::make_unique<PgTestSchema>("q");
      auto s = PostgresStore::Open(pg_->url(), pg_clock_, 2);
      ASSERT_TRUE(s.ok()) << s.status();
      store_ = std::move(*s);
#else
      GTEST_SKIP() << "built without PostgreSQL";
#endif
    }
    queries_ = std::make_unique<ComparisonQueries>(*store_, clock_);
  }

  void TearDown() override {
    queries_.reset();
    store_.reset();
    pg_.reset();
  }

  int64_t NowMs() { return ToUnixMillis(clock_.SystemNow()); }

  // A finished collection: one job per operator (case p0) whose round has
  // the given mean duration. Returns round ids by operator.
  std::map<std::string, int64_t> AddCollection(const std::string& id,
                                               const std::map<std::string, double>& mean_us,
                                               const std::map<std::string, std::string>& labels,
                                               const std::string& team = "alpha") {
    EXPECT_TRUE(store_->InsertCollection(CollectionOf(id, mean_us, labels, team)).ok());
    std::map<std::string, int64_t> rounds;
    for (size_t i = 0; i < mean_us.size(); ++i) {
      clock_.Advance(std::chrono::seconds(1));
      auto a = store_->ClaimJob(ClaimNow(), ChooseClaim);
      EXPECT_TRUE(a.ok() && a->has_value()) << a.status();
      if (!a.ok() || !a->has_value()) return rounds;
      const v1::JobAssignment& job = **a;
      auto ack = store_->RecordResult(SuccessOf(id, job, mean_us.at(job.operator_name())));
      EXPECT_TRUE(ack.ok()) << ack.status();
      if (ack.ok()) rounds[job.operator_name()] = ack->round_id;
    }
    return rounds;
  }

  // The collection AddCollection submits: one operator and one job (case p0) per entry.
  NewCollection CollectionOf(const std::string& id, const std::map<std::string, double>& mean_us,
                             const std::map<std::string, std::string>& labels,
                             const std::string& team) {
    NewCollection c;
    c.id = id;
    c.team = team;
    c.spec.set_max_concurrent_jobs(8);
    c.spec.mutable_labels()->insert(labels.begin(), labels.end());
    for (const auto& [op, us] : mean_us) {
      auto* spec = c.spec.add_operators();
      spec->set_name(op);
      spec->set_bundle_sha256("sha-" + op);
      spec->set_runner("run.py");
      c.jobs.push_back({op, "p0", "kernel_" + op});
    }
    c.now_ms = NowMs();
    return c;
  }

  // A claim by agent-1 for its one device, now.
  ClaimRequest ClaimNow() {
    ClaimRequest req;
    req.agent_id = "agent-1";
    req.host = "host-1";
    req.devices = {{0, "Ascend910B2"}};
    req.now_ms = NowMs();
    req.lease_ttl_ms = 60'000;
    req.lease_secret = "secret-of-agent-1";
    return req;
  }

  // A successful result for `job` of collection `id`: seven samples around `mean_us` (the next
  // seed), golden ratio 2.0.
  AttemptResult SuccessOf(const std::string& id, const v1::JobAssignment& job, double mean_us) {
    AttemptResult r;
    r.agent_id = "agent-1";
    r.ref = {job.job_id(), job.attempt(), job.fencing_token(), job.lease_secret()};
    r.update_uuid = absl::StrCat(id, "-", job.job_id());
    r.outcome = v1::ATTEMPT_OUTCOME_SUCCEEDED;
    r.evidence.set_operator_name(job.operator_name());
    r.evidence.set_case_id("p0");
    double sum = 0;
    for (double s : Samples(mean_us, ++seed_)) {
      r.evidence.mutable_duration()->add_samples_us(s);
      sum += s;
    }
    r.evidence.mutable_duration()->set_aggregate_us(sum / 7);
    r.evidence.mutable_fingerprint()->set_soc("Ascend910B2");
    r.evidence.mutable_golden()->set_status("joined");
    r.evidence.mutable_golden()->set_ratio(2.0);
    r.metrics = {{"duration", sum / 7}};
    r.now_ms = NowMs();
    return r;
  }

  npuperf::testing::FakeClock clock_;
  RealClock pg_clock_;  // the PostgreSQL store's: retry backoff, deadlines
  std::unique_ptr<Store> store_;
  std::unique_ptr<ComparisonQueries> queries_;
  std::unique_ptr<PgTestSchema> pg_;  // PostgreSQL runs only
  uint32_t seed_ = 0;
};

TEST_P(ComparisonQueriesTest, CollectionsAndRounds) {
  auto base = AddCollection("base", {{"a", 100}, {"b", 100}, {"c", 100}}, {});
  auto cand = AddCollection("cand", {{"a", 80}, {"b", 125}, {"c", 100}}, {});
  v1::CompareCollectionsRequest req;
  req.set_baseline_collection_id("base");
  req.set_candidate_collection_id("cand");
  auto out = queries_->CompareCollections("alpha", req);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->counts().matched(), 3);
  EXPECT_EQ(out->counts().comparable(), 3);
  EXPECT_EQ(out->counts().improved(), 1);
  EXPECT_EQ(out->counts().regressed(), 1);
  EXPECT_EQ(out->counts().stable(), 1);
  EXPECT_NEAR(out->geomean_ratio(), std::cbrt(0.8 * 1.25 * 1.0), 0.02);
  // Another team sees neither collection.
  EXPECT_TRUE(absl::IsNotFound(queries_->CompareCollections("beta", req).status()));
  auto bad = queries_->CompareCollections("alpha", v1::CompareCollectionsRequest());
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "baseline_collection_id"));

  v1::CompareRoundsRequest rr;
  rr.set_baseline_round_id(base["b"]);
  rr.set_candidate_round_id(cand["b"]);
  auto one = queries_->CompareRounds("alpha", rr);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->comparison().verdict(), v1::VERDICT_REGRESSED);
  EXPECT_EQ(one->comparison().duration().baseline_samples_us_size(), 7);
  EXPECT_TRUE(absl::IsNotFound(queries_->CompareRounds("beta", rr).status()));
  rr.mutable_options()->set_alpha(2);
  EXPECT_TRUE(absl::IsInvalidArgument(queries_->CompareRounds("alpha", rr).status()));

  v1::GetGoldenReportRequest g;
  g.set_collection_id("cand");
  auto golden = queries_->GetGoldenReport("alpha", g);
  ASSERT_TRUE(golden.ok()) << golden.status();
  EXPECT_EQ(golden->cases_size(), 3);
  EXPECT_NEAR(golden->geomean_ratio(), 2.0, 1e-9);
  EXPECT_EQ(golden->label(), kGoldenLabel);
}

TEST_P(ComparisonQueriesTest, CompareManyJudgesEachCandidateAsCompareCollectionsWould) {
  AddCollection("base", {{"a", 100}, {"b", 100}}, {});
  AddCollection("faster", {{"a", 80}, {"b", 100}}, {});
  AddCollection("slower", {{"a", 100}, {"b", 125}}, {});
  v1::CompareManyRequest req;
  req.set_baseline_collection_id("base");
  req.add_candidate_collection_ids("faster");
  req.add_candidate_collection_ids("slower");
  auto many = queries_->CompareMany("alpha", req);
  ASSERT_TRUE(many.ok()) << many.status();
  ASSERT_EQ(many->candidates_size(), 2);
  for (int i = 0; i < 2; ++i) {
    v1::CompareCollectionsRequest one;
    one.set_baseline_collection_id("base");
    one.set_candidate_collection_id(req.candidate_collection_ids(i));
    auto pair = queries_->CompareCollections("alpha", one);
    ASSERT_TRUE(pair.ok()) << pair.status();
    EXPECT_EQ(many->candidates(i).candidate_collection_id(), req.candidate_collection_ids(i));
    EXPECT_EQ(many->candidates(i).comparison().counts().SerializeAsString(),
              pair->counts().SerializeAsString());
    EXPECT_EQ(many->candidates(i).comparison().comparisons_size(), pair->comparisons_size());
  }
  EXPECT_EQ(many->candidates(0).comparison().counts().improved(), 1);
  EXPECT_EQ(many->candidates(1).comparison().counts().regressed(), 1);
  EXPECT_EQ(many->counts().matched(), 4);
  EXPECT_EQ(many->counts().improved(), 1);
  EXPECT_EQ(many->counts().regressed(), 1);
  EXPECT_EQ(many->counts().stable(), 2);
  EXPECT_TRUE(absl::IsNotFound(queries_->CompareMany("beta", req).status()));
}

TEST_P(ComparisonQueriesTest, CompareManyNamesEveryBadCandidate) {
  AddCollection("base", {{"a", 100}}, {});
  v1::CompareManyRequest req;
  req.set_baseline_collection_id("base");
  auto none = queries_->CompareMany("alpha", req);
  ASSERT_TRUE(absl::IsInvalidArgument(none.status()));
  EXPECT_TRUE(absl::StrContains(none.status().message(), "candidate_collection_ids"))
      << none.status();
  req.add_candidate_collection_ids("base");
  req.add_candidate_collection_ids("x");
  req.add_candidate_collection_ids("x");
  req.add_candidate_collection_ids("");
  auto bad = queries_->CompareMany("alpha", req);
  ASSERT_TRUE(absl::IsInvalidArgument(bad.status()));
  for (const char* field : {"candidate_collection_ids[0]", "candidate_collection_ids[2]",
                            "candidate_collection_ids[3]"}) {
    EXPECT_TRUE(absl::StrContains(bad.status().message(), field)) << field << " " << bad.status();
  }
  EXPECT_FALSE(absl::StrContains(bad.status().message(), "candidate_collection_ids[1]"));
  v1::CompareManyRequest too_many;
  too_many.set_baseline_collection_id("base");
  for (int i = 0; i <= kMaxCompareCandidates; ++i) {
    too_many.add_candidate_collection_ids(absl::StrCat("c", i));
  }
  EXPECT_TRUE(absl::IsInvalidArgument(queries_->CompareMany("alpha", too_many).status()));
  v1::CompareManyRequest absent;
  absent.set_baseline_collection_id("base");
  absent.add_candidate_collection_ids("nope");
  auto missing = queries_->CompareMany("alpha", absent);
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
}

TEST_P(ComparisonQueriesTest, PinningOrComparingAnUnfinishedCollectionIsFailedPrecondition) {
  AddCollection("done", {{"a", 100}}, {});
  ASSERT_TRUE(store_->InsertCollection(CollectionOf("running", {{"a", 100}}, {}, "alpha")).ok());
  v1::PinBaselineRequest pin;
  pin.set_label("branch=main");
  pin.set_collection_id("running");
  EXPECT_TRUE(absl::IsFailedPrecondition(queries_->PinBaseline("alpha", pin).status()));
  v1::CompareCollectionsRequest req;
  req.set_baseline_collection_id("done");
  req.set_candidate_collection_id("running");
  const absl::Status s = queries_->CompareCollections("alpha", req).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "candidate_collection_id")) << s;
  v1::ListRegressionsRequest regressions;
  regressions.set_baseline_label("branch=main");
  regressions.set_candidate_collection_id("running");
  EXPECT_TRUE(absl::IsFailedPrecondition(queries_->ListRegressions("alpha", regressions).status()));
  pin.set_collection_id("done");
  EXPECT_TRUE(queries_->PinBaseline("alpha", pin).ok());
}

TEST_P(ComparisonQueriesTest, RegressionsAgainstAPinnedBaseline) {
  AddCollection("main-1", {{"a", 100}, {"b", 100}}, {{"branch", "main"}});
  v1::PinBaselineRequest pin;
  pin.set_label("branch=main");
  pin.set_collection_id("main-1");
  ASSERT_TRUE(queries_->PinBaseline("alpha", pin).ok());
  pin.set_label("main");
  auto bad = queries_->PinBaseline("alpha", pin);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "label: must be key=value"));
  pin.set_label("branch=main");
  pin.set_collection_id("nope");
  EXPECT_TRUE(absl::IsNotFound(queries_->PinBaseline("alpha", pin).status()));
  pin.set_collection_id("main-1");
  EXPECT_TRUE(absl::IsNotFound(queries_->PinBaseline("beta", pin).status()));

  clock_.Advance(std::chrono::minutes(1));
  AddCollection("main-2", {{"a", 99.5}, {"b", 130}}, {{"branch", "main"}});
  AddCollection("dev-1", {{"a", 150}}, {{"branch", "dev"}});  // other label: not a candidate
  v1::ListRegressionsRequest req;
  req.set_baseline_label("branch=main");
  auto out = queries_->ListRegressions("alpha", req);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->regressions_size(), 1);
  EXPECT_EQ(out->regressions(0).operator_name(), "b");
  EXPECT_EQ(out->compared(), 2);
  EXPECT_EQ(out->baseline_description(), "baseline branch=main (collection main-1)");
  // A pull request's collection against the same baseline.
  req.set_candidate_collection_id("dev-1");
  out = queries_->ListRegressions("alpha", req);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->regressions_size(), 1);
  EXPECT_EQ(out->regressions(0).operator_name(), "a");
  EXPECT_EQ(out->compared(), 1);
  v1::ListRegressionsRequest none;
  none.set_baseline_label("branch=release");
  EXPECT_TRUE(absl::IsNotFound(queries_->ListRegressions("alpha", none).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      queries_->ListRegressions("alpha", v1::ListRegressionsRequest()).status()));
}

TEST_P(ComparisonQueriesTest, RegressionsSinceATimeUseTheNewestEarlierRound) {
  AddCollection("old", {{"a", 300}, {"b", 100}}, {});  // superseded by the next
  AddCollection("before", {{"a", 100}, {"b", 100}}, {});
  clock_.Advance(std::chrono::minutes(1));
  v1::ListRegressionsRequest req;
  *req.mutable_since() = TimeUtil::MillisecondsToTimestamp(NowMs());
  AddCollection("after", {{"a", 100.2}, {"b", 140}}, {});
  auto out = queries_->ListRegressions("alpha", req);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->regressions_size(), 1);
  EXPECT_EQ(out->regressions(0).operator_name(), "b");
  EXPECT_EQ(out->compared(), 2);  // a: stable against "before", not improved against "old"
  EXPECT_EQ(out->counts().stable(), 1);
  req.set_operator_name("a");
  out = queries_->ListRegressions("alpha", req);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->regressions_size(), 0);
  EXPECT_EQ(out->compared(), 1);
}

// A slow drift: operator "a" at 100 us for twelve nights, then 1 % slower
// each night for eight nights, "b" flat. Against yesterday every night is
// STABLE (a 1 % move); the drift is reported with the round where it began.
TEST_P(ComparisonQueriesTest, RegressionsSinceReportADriftWithTheRoundWhereItBegan) {
  std::vector<int64_t> a_rounds;
  std::vector<int64_t> night_ms;
  for (int night = 0; night < 20; ++night) {
    clock_.Advance(std::chrono::hours(24));
    night_ms.push_back(NowMs());
    const double a = night < 12 ? 100.0 : 100.0 * std::pow(1.01, night - 11);
    a_rounds.push_back(
        AddCollection(absl::StrCat("night-", night), {{"a", a}, {"b", 50}}, {})["a"]);
  }
  v1::ListRegressionsRequest req;
  *req.mutable_since() = TimeUtil::MillisecondsToTimestamp(night_ms.back());  // last night only
  auto out = queries_->ListRegressions("alpha", req);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->regressions_size(), 0);  // +1 % against the night before: stable
  ASSERT_EQ(out->drifts_size(), 1);
  const v1::Drift& d = out->drifts(0);
  EXPECT_EQ(d.operator_name(), "a");
  EXPECT_EQ(d.case_id(), "p0");
  const auto began = std::find(a_rounds.begin(), a_rounds.end(), d.began_round_id());
  ASSERT_NE(began, a_rounds.end());
  const auto night = began - a_rounds.begin();
  EXPECT_GE(night, 12);  // within the ramp, never on the flat part
  EXPECT_LE(night, 16);
  EXPECT_GT(d.change_pct(), 2);
  EXPECT_NEAR(d.before_us(), 100, 1.5);
  EXPECT_EQ(d.rounds_since(), 20 - night);
  EXPECT_FALSE(d.began_in_window());  // under way before last night: not new
  EXPECT_EQ(out->drift_cases_unexamined(), 0);

  *req.mutable_since() = TimeUtil::MillisecondsToTimestamp(night_ms[10]);  // a wider window
  out = queries_->ListRegressions("alpha", req);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->drifts_size(), 1);
  EXPECT_TRUE(out->drifts(0).began_in_window());
  EXPECT_EQ(queries_->ListRegressions("beta", req)->drifts_size(), 0);  // other team: nothing
}

// An improvement is no drift; a pinned baseline query looks at no series.
TEST_P(ComparisonQueriesTest, AFasterStepIsNoDriftAndPinnedQueriesHaveNone) {
  std::vector<int64_t> night_ms;
  for (int night = 0; night < 16; ++night) {
    clock_.Advance(std::chrono::hours(24));
    night_ms.push_back(NowMs());
    AddCollection(absl::StrCat("night-", night), {{"a", night < 8 ? 100.0 : 80.0}}, {});
  }
  v1::ListRegressionsRequest req;
  *req.mutable_since() = TimeUtil::MillisecondsToTimestamp(night_ms[4]);
  auto out = queries_->ListRegressions("alpha", req);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->drifts_size(), 0);
  v1::PinBaselineRequest pin;
  pin.set_label("branch=main");
  pin.set_collection_id("night-0");
  ASSERT_TRUE(queries_->PinBaseline("alpha", pin).ok());
  v1::ListRegressionsRequest pinned;
  pinned.set_baseline_label("branch=main");
  out = queries_->ListRegressions("alpha", pinned);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->drifts_size(), 0);
}

// Twelve nightly rounds of operator "a" at 100 us, then eight at 115 us: the
// change point is the first slow round, found on either backend.
TEST_P(ComparisonQueriesTest, ListRoundsWithChangesFindsTheRoundWhereTheStepBegan) {
  std::vector<int64_t> rounds;
  for (int night = 0; night < 20; ++night) {
    auto r = AddCollection(absl::StrCat("night-", night), {{"a", night < 12 ? 100.0 : 115.0}}, {});
    rounds.push_back(r["a"]);
  }
  v1::ListRoundsRequest req;
  req.set_operator_name("a");
  req.set_metric("duration");
  req.set_page_size(1000);
  auto plain = queries_->ListRounds("alpha", req);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->series_size(), 20);
  EXPECT_EQ(plain->changes_size(), 0);  // not asked

  req.set_changes(true);
  auto got = queries_->ListRounds("alpha", req);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->changes_size(), 1);
  const v1::SeriesChange& c = got->changes(0);
  EXPECT_EQ(c.case_id(), "p0");
  EXPECT_EQ(c.round_id(), rounds[12]);
  EXPECT_NEAR(c.change_pct(), 15, 3);
  EXPECT_EQ(c.points_before(), 12);
  EXPECT_EQ(c.points_after(), 8);
  EXPECT_LE(c.p_value(), 0.01);

  req.set_min_change_pct(20);  // a 15 % step is under a 20 % floor
  EXPECT_EQ(queries_->ListRounds("alpha", req)->changes_size(), 0);
  EXPECT_EQ(queries_->ListRounds("beta", req)->changes_size(), 0);  // another team sees none
}

TEST_P(ComparisonQueriesTest, ListRoundsChangesNeedAMetricAndASaneFloor) {
  v1::ListRoundsRequest req;
  req.set_operator_name("a");
  req.set_changes(true);
  auto got = queries_->ListRounds("alpha", req);
  ASSERT_TRUE(absl::IsInvalidArgument(got.status())) << got.status();
  EXPECT_NE(got.status().message().find("changes"), std::string::npos) << got.status();
  req.set_metric("duration");
  for (double bad : {-1.0, 1001.0, std::nan("")}) {
    req.set_min_change_pct(bad);
    got = queries_->ListRounds("alpha", req);
    ASSERT_TRUE(absl::IsInvalidArgument(got.status())) << bad;
    EXPECT_NE(got.status().message().find("min_change_pct"), std::string::npos) << got.status();
  }
  req.set_changes(false);
  req.set_min_change_pct(5);
  EXPECT_TRUE(absl::IsInvalidArgument(queries_->ListRounds("alpha", req).status()));
}

// The nightly bot of issue 20: detect -> ack -> the next night the same regression, not a
// new one (nothing DETECTED: the bot passes); then the case is stable (FIXED) and regresses
// again: a new DETECTED regression.
TEST_P(ComparisonQueriesTest, ANightlyBotIsNotRealarmedByAnAcknowledgedRegression) {
  const std::map<std::string, std::string> main = {{"branch", "main"}};
  AddCollection("main-1", {{"a", 100}, {"b", 100}}, main);
  v1::PinBaselineRequest pin;
  pin.set_label("branch=main");
  pin.set_collection_id("main-1");
  ASSERT_TRUE(queries_->PinBaseline("alpha", pin).ok());
  v1::ListRegressionsRequest nightly;
  nightly.set_baseline_label("branch=main");
  auto night = [&](const std::string& id, double b_us) {
    clock_.Advance(std::chrono::hours(24));
    AddCollection(id, {{"a", 100}, {"b", b_us}}, main);
    auto out = queries_->ListRegressions("alpha", nightly);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.value_or(v1::ListRegressionsResponse());
  };
  v1::ListRegressionsResponse first = night("main-2", 130);
  ASSERT_EQ(first.regressions_size(), 1);
  ASSERT_EQ(first.tracked_size(), 1);
  const v1::Regression detected = first.tracked(0);
  EXPECT_GT(detected.id(), 0);
  EXPECT_EQ(detected.state(), v1::REGRESSION_STATE_DETECTED);
  EXPECT_EQ(detected.operator_name(), "b");
  EXPECT_EQ(detected.baseline_label(), "branch=main");
  EXPECT_EQ(detected.rule(), "duration");
  EXPECT_EQ(detected.first_round_id(), first.regressions(0).candidate_round_id());

  v1::TriageRegressionRequest ack;
  ack.set_id(detected.id());
  ack.set_expected_state(v1::REGRESSION_STATE_DETECTED);
  ack.set_new_state(v1::REGRESSION_STATE_ACKNOWLEDGED);
  ack.set_note("kernel change 41, looking");
  auto acked = queries_->triage().TriageRegression("alpha", ack);
  ASSERT_TRUE(acked.ok()) << acked.status();
  EXPECT_EQ(acked->regression().state(), v1::REGRESSION_STATE_ACKNOWLEDGED);

  v1::ListRegressionsResponse second = night("main-3", 131);
  ASSERT_EQ(second.tracked_size(), 1);
  EXPECT_EQ(second.tracked(0).id(), detected.id());
  EXPECT_EQ(second.tracked(0).state(), v1::REGRESSION_STATE_ACKNOWLEDGED);
  EXPECT_EQ(second.tracked(0).seen_rounds(), 2);
  for (const auto& t : second.tracked()) EXPECT_FALSE(FailsBots(t.state()));

  v1::ListRegressionsResponse fixed = night("main-4", 100.3);
  EXPECT_EQ(fixed.regressions_size(), 0);
  v1::GetRegressionRequest get;
  get.set_id(detected.id());
  auto closed = queries_->triage().GetRegression("alpha", get);
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->regression().state(), v1::REGRESSION_STATE_FIXED);
  EXPECT_TRUE(closed->regression().has_ended_at());
  ASSERT_EQ(closed->transitions_size(), 3);
  EXPECT_EQ(closed->transitions(1).actor(), "alpha");
  EXPECT_EQ(closed->transitions(1).note(), "kernel change 41, looking");
  EXPECT_EQ(closed->transitions(2).actor(), "npuperf");

  v1::ListRegressionsResponse again = night("main-5", 130);
  ASSERT_EQ(again.tracked_size(), 1);
  EXPECT_GT(again.tracked(0).id(), detected.id());
  EXPECT_EQ(again.tracked(0).state(), v1::REGRESSION_STATE_DETECTED);
  EXPECT_TRUE(FailsBots(again.tracked(0).state()));
}

TEST_P(ComparisonQueriesTest, ClosedRegressionsAreHiddenUnlessAskedAndFeedThePrecision) {
  const std::map<std::string, std::string> main = {{"branch", "main"}};
  AddCollection("main-1", {{"a", 100}, {"b", 100}}, main);
  v1::PinBaselineRequest pin;
  pin.set_label("branch=main");
  pin.set_collection_id("main-1");
  ASSERT_TRUE(queries_->PinBaseline("alpha", pin).ok());
  clock_.Advance(std::chrono::hours(24));
  AddCollection("main-2", {{"a", 140}, {"b", 130}}, main);
  v1::ListRegressionsRequest req;
  req.set_baseline_label("branch=main");
  auto out = queries_->ListRegressions("alpha", req);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->tracked_size(), 2);
  ASSERT_EQ(out->precision_size(), 1);
  EXPECT_TRUE(std::isnan(out->precision(0).precision()));
  for (int i = 0; i < 2; ++i) {
    v1::TriageRegressionRequest t;
    t.set_id(out->tracked(i).id());
    t.set_expected_state(v1::REGRESSION_STATE_DETECTED);
    t.set_new_state(i == 0 ? v1::REGRESSION_STATE_FALSE_POSITIVE : v1::REGRESSION_STATE_WONT_FIX);
    ASSERT_TRUE(queries_->triage().TriageRegression("alpha", t).ok());
  }
  out = queries_->ListRegressions("alpha", req);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->regressions_size(), 0);
  EXPECT_EQ(out->tracked_size(), 0);
  EXPECT_EQ(out->hidden_closed(), 2);
  EXPECT_EQ(out->compared(), 2);
  ASSERT_EQ(out->precision_size(), 1);
  EXPECT_EQ(out->precision(0).rule(), "duration");
  EXPECT_EQ(out->precision(0).confirmed(), 1);
  EXPECT_EQ(out->precision(0).false_positives(), 1);
  EXPECT_DOUBLE_EQ(out->precision(0).precision(), 0.5);
  req.set_include_closed(true);
  out = queries_->ListRegressions("alpha", req);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->regressions_size(), 2);
  EXPECT_EQ(out->hidden_closed(), 0);
  // Since-listings compare moving predecessors: nothing is tracked.
  v1::ListRegressionsRequest since;
  *since.mutable_since() = TimeUtil::MillisecondsToTimestamp(NowMs() - 3'600'000);
  out = queries_->ListRegressions("alpha", since);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->tracked_size(), 0);
}

TEST_P(ComparisonQueriesTest, TriageRefusesBadFieldsOtherTeamsAndTheLoserOfARace) {
  AddCollection("main-1", {{"b", 100}}, {{"branch", "main"}});
  v1::PinBaselineRequest pin;
  pin.set_label("branch=main");
  pin.set_collection_id("main-1");
  ASSERT_TRUE(queries_->PinBaseline("alpha", pin).ok());
  clock_.Advance(std::chrono::hours(1));
  AddCollection("main-2", {{"b", 130}}, {{"branch", "main"}});
  v1::ListRegressionsRequest list;
  list.set_baseline_label("branch=main");
  auto out = queries_->ListRegressions("alpha", list);
  ASSERT_TRUE(out.ok() && out->tracked_size() == 1) << out.status();
  const int64_t id = out->tracked(0).id();

  v1::TriageRegressionRequest bad;
  bad.set_expected_state(static_cast<v1::RegressionState>(9));
  bad.set_new_state(v1::REGRESSION_STATE_DETECTED);
  bad.set_note("bad \xC3");
  const absl::Status s = queries_->triage().TriageRegression("alpha", bad).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  for (const char* field : {"id", "expected_state", "new_state", "note"}) {
    EXPECT_TRUE(absl::StrContains(s.message(), field)) << field << ": " << s;
  }
  bad = v1::TriageRegressionRequest();
  bad.set_id(id);
  bad.set_expected_state(v1::REGRESSION_STATE_DETECTED);
  bad.set_new_state(v1::REGRESSION_STATE_ACKNOWLEDGED);
  bad.set_note(std::string(1025, 'n'));
  EXPECT_TRUE(absl::IsInvalidArgument(queries_->triage().TriageRegression("alpha", bad).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      queries_->triage().GetRegression("alpha", v1::GetRegressionRequest()).status()));

  v1::TriageRegressionRequest ack;
  ack.set_id(id);
  ack.set_expected_state(v1::REGRESSION_STATE_DETECTED);
  ack.set_new_state(v1::REGRESSION_STATE_ACKNOWLEDGED);
  EXPECT_TRUE(absl::IsNotFound(queries_->triage().TriageRegression("beta", ack).status()));
  v1::GetRegressionRequest get;
  get.set_id(id);
  EXPECT_TRUE(absl::IsNotFound(queries_->triage().GetRegression("beta", get).status()));
  ASSERT_TRUE(queries_->triage().TriageRegression("alpha", ack).ok());
  v1::TriageRegressionRequest late = ack;
  late.set_new_state(v1::REGRESSION_STATE_FALSE_POSITIVE);
  const absl::Status lost = queries_->triage().TriageRegression("alpha", late).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(lost)) << lost;
  EXPECT_TRUE(absl::StrContains(lost.message(), "is ACKNOWLEDGED")) << lost;
}

INSTANTIATE_TEST_SUITE_P(Backends, ComparisonQueriesTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const auto& param_info) {
                           return param_info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
                         });

}  // namespace
}  // namespace npuperf::server
