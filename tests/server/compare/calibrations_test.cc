// Calibrations (server/compare/calibrations.h) and the verdicts that use what
// they measure (ComparisonQueries), against real stores: SQLite always,
// PostgreSQL when NPUPERF_TEST_PG_URL is set. The submission seam is a fake
// that inserts the collection the way Scheduler::Submit does (idempotent per
// key); rounds are made the way agents make them: claim → result.
#include "server/compare/calibrations.h"

#include <cmath>
#include <map>
#include <optional>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/compare/comparison_queries.h"
#include "server/core/assignment.h"
#include "server/core/noise_rules.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/pg_schema.h"
#if NPUPERF_WITH_POSTGRES
#include "server/backends/postgres/postgres_store.h"
#endif

namespace npuperf::server {
namespace {

enum class Backend { kSqlite, kPostgres };

class CalibrationsTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kSqlite) {
      auto s = SqliteStore::Open(":memory:");
      ASSERT_TRUE(s.ok()) << s.status();
      store_ = std::move(*s);
    } else {
#if NPUPERF_WITH_POSTGRES
      if (PgTestSchema::BaseUrl().empty()) GTEST_SKIP() << "NPUPERF_TEST_PG_URL is not set";
      pg_ = std::make_unique<PgTestSchema>("cal");
      auto s = PostgresStore::Open(pg_->url(), pg_clock_, 2);
      ASSERT_TRUE(s.ok()) << s.status();
      store_ = std::move(*s);
#else
      GTEST_SKIP() << "built without PostgreSQL";
#endif
    }
    calibrations_ = MakeCalibrations();
    queries_ = std::make_unique<ComparisonQueries>(*store_, clock_);
  }

  void TearDown() override {
    calibrations_.reset();
    queries_.reset();
    store_.reset();
    pg_.reset();
  }

  std::unique_ptr<Calibrations> MakeCalibrations(CalibrationOptions options = {}) {
    return std::make_unique<Calibrations>(
        *store_, clock_,
        [this](const std::string& team, const v1::SubmitCollectionRequest& req,
               const std::map<std::string, std::string>& server_labels) {
          return Submit(team, req, server_labels);
        },
        options);
  }

  // The fake submission: what Scheduler::SubmitForServer stores (the server labels added to the
  // spec's), one job per operator (case p0). submitted_ keeps each request with its server labels.
  absl::StatusOr<std::pair<v1::Collection, bool>> Submit(
      const std::string& team, const v1::SubmitCollectionRequest& req,
      const std::map<std::string, std::string>& server_labels) {
    v1::SubmitCollectionRequest as_stored = req;
    for (const auto& [k, v] : server_labels) (*as_stored.mutable_spec()->mutable_labels())[k] = v;
    submitted_.push_back(as_stored);
    if (refuse_) return *refuse_;
    NewCollection c;
    c.id = absl::StrCat("c-sub", submitted_.size());
    c.team = team;
    c.spec = as_stored.spec();
    c.idempotency_key = req.idempotency_key();
    for (const auto& op : req.spec().operators()) {
      c.jobs.push_back({op.name(), "p0", "kernel_" + op.name()});
    }
    c.now_ms = NowMs();
    return store_->InsertCollection(c);
  }

  int64_t NowMs() { return ToUnixMillis(clock_.SystemNow()); }

  // A collection inserted as submitted (not yet run): operators a (and b).
  void AddCollection(const std::string& id, const std::string& team = "alpha",
                     v1::ProfileMode mode = v1::PROFILE_MODE_STANDARD,
                     std::vector<std::string> ops = {"a"}) {
    NewCollection c;
    c.id = id;
    c.team = team;
    c.spec.set_max_concurrent_jobs(8);
    c.spec.mutable_params()->set_mode(mode);
    for (const std::string& op : ops) {
      auto* spec = c.spec.add_operators();
      spec->set_name(op);
      spec->set_bundle_sha256("sha-" + op);
      spec->set_runner("run.py");
      c.jobs.push_back({op, "p0", "kernel_" + op});
    }
    c.now_ms = NowMs();
    ASSERT_TRUE(store_->InsertCollection(c).ok());
  }

  // Claims every queued job (oldest first) and reports it: succeeded with
  // samples around mean_us(collection id) on soc, or failed when that is 0.
  void RunQueued(const std::function<double(const std::string&)>& mean_us,
                 const std::string& soc = "A2") {
    while (true) {
      clock_.Advance(std::chrono::seconds(1));
      ClaimRequest req;
      req.agent_id = "agent-1";
      req.host = "host-1";
      req.devices = {{0, soc}};
      req.now_ms = NowMs();
      req.lease_ttl_ms = 60'000;
      req.lease_secret = "secret";
      auto a = store_->ClaimJob(req, ChooseClaim);
      ASSERT_TRUE(a.ok()) << a.status();
      if (!a->has_value()) return;
      const v1::JobAssignment& job = **a;
      ASSERT_TRUE(store_->RecordResult(ResultOf(job, mean_us(job.collection_id()), soc)).ok());
    }
  }

  AttemptResult ResultOf(const v1::JobAssignment& job, double mean_us, const std::string& soc) {
    AttemptResult r;
    r.agent_id = "agent-1";
    r.ref = {job.job_id(), job.attempt(), job.fencing_token(), job.lease_secret()};
    r.update_uuid = absl::StrCat("u-", job.job_id());
    r.now_ms = NowMs();
    if (mean_us == 0) {
      r.outcome = v1::ATTEMPT_OUTCOME_FAILED;
      r.failure_reason = "runner exited 1";
      return r;
    }
    r.outcome = v1::ATTEMPT_OUTCOME_SUCCEEDED;
    r.evidence.set_operator_name(job.operator_name());
    r.evidence.set_case_id("p0");
    std::mt19937 gen(++seed_);
    std::normal_distribution<double> noise(mean_us, mean_us * 0.001);
    double sum = 0;
    for (int i = 0; i < 7; ++i) {
      const double s = noise(gen);
      r.evidence.mutable_duration()->add_samples_us(s);
      sum += s;
    }
    r.evidence.mutable_duration()->set_aggregate_us(sum / 7);
    r.evidence.mutable_fingerprint()->set_soc(soc);
    r.evidence.mutable_fingerprint()->set_mode("standard");
    r.metrics = {{"duration", sum / 7}};
    return r;
  }

  // The source collection c-src (team alpha) run once at 100 us.
  void FinishedSource() {
    AddCollection("c-src");
    RunQueued([](const std::string&) { return 100.0; });
  }

  v1::Calibration Start(int runs, const std::string& source = "c-src") {
    v1::StartCalibrationRequest req;
    req.set_collection_id(source);
    req.set_runs(runs);
    auto got = calibrations_->StartCalibration("alpha", req);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? got->calibration() : v1::Calibration();
  }

  v1::Calibration Get(int64_t id, const std::string& team = "alpha") {
    v1::GetCalibrationRequest req;
    req.set_calibration_id(id);
    auto got = calibrations_->GetCalibration(team, req);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? got->calibration() : v1::Calibration();
  }

  // A/A runs c-sub1.. at these means (in submission order).
  std::function<double(const std::string&)> Means(std::map<std::string, double> means) {
    return [means](const std::string& id) {
      auto it = means.find(id);
      return it == means.end() ? 100.0 : it->second;
    };
  }

  npuperf::testing::FakeClock clock_;
  RealClock pg_clock_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Calibrations> calibrations_;
  std::unique_ptr<ComparisonQueries> queries_;
  std::unique_ptr<PgTestSchema> pg_;
  std::vector<v1::SubmitCollectionRequest> submitted_;
  std::optional<absl::Status> refuse_;
  uint32_t seed_ = 0;
};

absl::Status StartStatus(Calibrations& c, const std::string& team, const std::string& id,
                         int runs) {
  v1::StartCalibrationRequest req;
  req.set_collection_id(id);
  req.set_runs(runs);
  return c.StartCalibration(team, req).status();
}

TEST_P(CalibrationsTest, StartRefusesBadInputNamingTheField) {
  FinishedSource();
  for (int runs : {-1, 1, 2, 21, 1000}) {
    absl::Status s = StartStatus(*calibrations_, "alpha", "c-src", runs);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << runs << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "runs")) << s;
  }
  absl::Status s = StartStatus(*calibrations_, "alpha", "", 5);
  EXPECT_TRUE(absl::IsInvalidArgument(s) && absl::StrContains(s.message(), "collection_id")) << s;
  s = StartStatus(*calibrations_, "alpha", std::string(65, 'c'), 5);
  EXPECT_TRUE(absl::IsInvalidArgument(s) && absl::StrContains(s.message(), "collection_id")) << s;
  // Another team's collection does not exist for beta.
  EXPECT_TRUE(absl::IsNotFound(StartStatus(*calibrations_, "beta", "c-src", 5)));
  // Unfinished, discovery and compare-mode collections cannot be calibrated.
  AddCollection("c-queued");
  s = StartStatus(*calibrations_, "alpha", "c-queued", 5);
  EXPECT_TRUE(absl::IsFailedPrecondition(s) && absl::StrContains(s.message(), "collection_id"))
      << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "has not finished")) << s;
  RunQueued([](const std::string&) { return 100.0; });
  for (auto mode : {v1::PROFILE_MODE_DISCOVER, v1::PROFILE_MODE_COMPARE}) {
    const std::string id = absl::StrCat("c-mode", static_cast<int>(mode));
    AddCollection(id, "alpha", mode);
    RunQueued([](const std::string&) { return 100.0; });
    s = StartStatus(*calibrations_, "alpha", id, 5);
    EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "standard or quick")) << s;
  }
  // A collection without a succeeded job has nothing to rerun.
  AddCollection("c-failed");
  RunQueued([](const std::string&) { return 0.0; });
  s = StartStatus(*calibrations_, "alpha", "c-failed", 5);
  EXPECT_TRUE(absl::IsFailedPrecondition(s) && absl::StrContains(s.message(), "succeeded")) << s;
  // Nothing was submitted or stored by any of these.
  EXPECT_TRUE(submitted_.empty());
  auto running = store_->ListRunningCalibrations(10);
  ASSERT_TRUE(running.ok());
  EXPECT_TRUE(running->empty());
  // Unknown ids and another team's calibrations.
  v1::GetCalibrationRequest get;
  EXPECT_TRUE(absl::IsInvalidArgument(calibrations_->GetCalibration("alpha", get).status()));
  get.set_calibration_id(7);
  EXPECT_TRUE(absl::IsNotFound(calibrations_->GetCalibration("alpha", get).status()));
  v1::ListNoiseRequest noise;
  noise.set_operator_name(std::string(129, 'o'));
  EXPECT_TRUE(absl::IsInvalidArgument(calibrations_->ListNoise("alpha", noise).status()));
}

TEST_P(CalibrationsTest, ItSubmitsLabelledRerunsOnceAndMeasuresTheirSpreadWhenTheyFinish) {
  FinishedSource();
  const v1::Calibration started = Start(3);
  ASSERT_GT(started.id(), 0);
  EXPECT_EQ(started.state(), v1::CALIBRATION_STATE_RUNNING);
  EXPECT_EQ(started.runs(), 3);
  EXPECT_EQ(started.source_collection_id(), "c-src");
  ASSERT_EQ(started.collection_ids_size(), 3);
  EXPECT_TRUE(absl::StrContains(started.reason(), "0 of 3 finished")) << started.reason();
  ASSERT_EQ(submitted_.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const v1::SubmitCollectionRequest& req = submitted_[k];
    EXPECT_EQ(req.idempotency_key(),
              absl::StrCat("npuperf-calibration-", started.id(), "-", k + 1));
    EXPECT_EQ(req.spec().labels().at(kCalibrationLabel), absl::StrCat(started.id()));
    EXPECT_EQ(req.spec().operators(0).bundle_sha256(), "sha-a");  // the source's spec
  }
  // Advancing while they run submits nothing again, whichever replica does it.
  ASSERT_EQ(calibrations_->Advance(), absl::OkStatus());
  ASSERT_EQ(MakeCalibrations()->Advance(), absl::OkStatus());
  EXPECT_EQ(Get(started.id()).state(), v1::CALIBRATION_STATE_RUNNING);
  EXPECT_EQ(submitted_.size(), 3u);

  RunQueued(Means({{"c-sub1", 100}, {"c-sub2", 102}, {"c-sub3", 104}}));
  ASSERT_EQ(calibrations_->Advance(), absl::OkStatus());
  const v1::Calibration done = Get(started.id());
  EXPECT_EQ(done.state(), v1::CALIBRATION_STATE_SUCCEEDED) << done.reason();
  EXPECT_EQ(done.collection_ids_size(), 3);
  EXPECT_TRUE(done.has_finished_at());
  ASSERT_EQ(done.spreads_size(), 1);  // duration only: these rounds carry no ratio metric
  const v1::NoiseSpread& n = done.spreads(0);
  EXPECT_EQ(n.operator_name(), "a");
  EXPECT_EQ(n.soc(), "A2");
  EXPECT_EQ(n.mode(), "standard");
  EXPECT_EQ(n.family(), "duration");
  EXPECT_EQ(n.rounds(), 3);
  EXPECT_NEAR(n.spread(), 2.77, 0.1);  // 100, 102, 104 (+ 0.1 % sample noise)
  EXPECT_NEAR(n.threshold(), 3 * n.spread(), 1e-9);
  EXPECT_NEAR(n.expected_false_alarm_rate(), DurationFalseAlarmRate(n.threshold(), n.spread()),
              1e-12);
  EXPECT_EQ(n.calibration_id(), started.id());

  v1::ListNoiseRequest list;
  auto noise = calibrations_->ListNoise("alpha", list);
  ASSERT_TRUE(noise.ok()) << noise.status();
  ASSERT_EQ(noise->spreads_size(), 1);
  EXPECT_EQ(noise->spreads(0).SerializeAsString(), n.SerializeAsString());
  // Another team sees neither the calibration nor its noise.
  v1::GetCalibrationRequest get;
  get.set_calibration_id(started.id());
  EXPECT_TRUE(absl::IsNotFound(calibrations_->GetCalibration("beta", get).status()));
  auto beta = calibrations_->ListNoise("beta", list);
  ASSERT_TRUE(beta.ok());
  EXPECT_EQ(beta->spreads_size(), 0);
}

TEST_P(CalibrationsTest, TooFewSucceededRoundsFailItNamingTheCase) {
  FinishedSource();
  const v1::Calibration started = Start(3);
  RunQueued(Means({{"c-sub1", 100}, {"c-sub2", 0}, {"c-sub3", 0}}));  // two runs fail
  const v1::Calibration done = Get(started.id());                     // GetCalibration advances it
  EXPECT_EQ(done.state(), v1::CALIBRATION_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(done.reason(), "a/p0 1 of 3")) << done.reason();
  EXPECT_EQ(done.spreads_size(), 0);
  auto noise = calibrations_->ListNoise("alpha", v1::ListNoiseRequest());
  ASSERT_TRUE(noise.ok());
  EXPECT_EQ(noise->spreads_size(), 0);
}

TEST_P(CalibrationsTest, ARefusedRunFailsItAndAQuotaWaitsForTheNextAdvance) {
  FinishedSource();
  refuse_ = absl::ResourceExhaustedError("team alpha has 1000 queued jobs");
  const v1::Calibration waiting = Start(3);
  EXPECT_EQ(waiting.state(), v1::CALIBRATION_STATE_RUNNING);
  EXPECT_EQ(waiting.collection_ids_size(), 0);
  refuse_.reset();
  ASSERT_EQ(calibrations_->Advance(), absl::OkStatus());
  EXPECT_EQ(Get(waiting.id()).collection_ids_size(), 3);

  refuse_ = absl::FailedPreconditionError("bundle sha-a is no longer stored");
  const v1::Calibration refused = Start(4);
  EXPECT_EQ(refused.state(), v1::CALIBRATION_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(refused.reason(), "A/A run 1 was refused")) << refused.reason();
  EXPECT_TRUE(absl::StrContains(refused.reason(), "no longer stored")) << refused.reason();
}

TEST_P(CalibrationsTest, ListNoiseAnswersAtMostItsLimit) {
  AddCollection("c-two", "alpha", v1::PROFILE_MODE_STANDARD, {"a", "b"});
  RunQueued([](const std::string&) { return 100.0; });
  Start(3, "c-two");
  RunQueued(Means({{"c-sub1", 100}, {"c-sub2", 101}, {"c-sub3", 99}}));
  ASSERT_EQ(calibrations_->Advance(), absl::OkStatus());
  auto all = calibrations_->ListNoise("alpha", v1::ListNoiseRequest());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->spreads_size(), 2);
  CalibrationOptions one;
  one.max_noise_rows = 1;
  auto limited = MakeCalibrations(one)->ListNoise("alpha", v1::ListNoiseRequest());
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->spreads_size(), 1);
  v1::ListNoiseRequest only_b;
  only_b.set_operator_name("b");
  auto b = calibrations_->ListNoise("alpha", only_b);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->spreads_size(), 1);
  EXPECT_EQ(b->spreads(0).operator_name(), "b");
}

// The verdicts: a 6 % slowdown is REGRESSED at the 2 % default, STABLE once the case's
// measured spread (~2.8 %) puts its threshold at ~8.3 %; an explicit request threshold wins.
TEST_P(CalibrationsTest, ComparisonsUseTheCalibratedThresholdOfMatchingCasesOnly) {
  AddCollection("c-base");
  RunQueued([](const std::string&) { return 100.0; });
  AddCollection("c-cand");
  RunQueued([](const std::string&) { return 106.0; });
  v1::CompareCollectionsRequest req;
  req.set_baseline_collection_id("c-base");
  req.set_candidate_collection_id("c-cand");
  auto before = queries_->CompareCollections("alpha", req);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(before->comparisons_size(), 1);
  const v1::DurationComparison& d0 = before->comparisons(0).duration();
  EXPECT_EQ(d0.verdict(), v1::VERDICT_REGRESSED);
  EXPECT_EQ(d0.threshold_source(), "default");
  EXPECT_DOUBLE_EQ(d0.threshold_pct(), 2);
  EXPECT_TRUE(std::isnan(d0.expected_false_alarm_rate()));
  EXPECT_EQ(d0.calibration_id(), 0);
  EXPECT_TRUE(absl::StrContains(d0.rule(), "(default)")) << d0.rule();

  const v1::Calibration started = Start(3, "c-base");
  RunQueued(Means({{"c-sub1", 100}, {"c-sub2", 102}, {"c-sub3", 104}}));
  ASSERT_EQ(calibrations_->Advance(), absl::OkStatus());
  ASSERT_EQ(Get(started.id()).state(), v1::CALIBRATION_STATE_SUCCEEDED);

  auto after = queries_->CompareCollections("alpha", req);
  ASSERT_TRUE(after.ok()) << after.status();
  const v1::DurationComparison& d1 = after->comparisons(0).duration();
  EXPECT_EQ(d1.verdict(), v1::VERDICT_STABLE) << d1.rule();
  EXPECT_EQ(d1.threshold_source(), "calibrated");
  EXPECT_NEAR(d1.measured_spread_pct(), 2.77, 0.1);
  EXPECT_NEAR(d1.threshold_pct(), 3 * d1.measured_spread_pct(), 1e-9);
  EXPECT_NEAR(d1.expected_false_alarm_rate(),
              DurationFalseAlarmRate(d1.threshold_pct(), d1.measured_spread_pct()), 1e-12);
  EXPECT_EQ(d1.calibration_id(), started.id());
  EXPECT_TRUE(absl::StrContains(d1.rule(), "(calibrated)")) << d1.rule();

  // CompareRounds and CompareMany read the same spreads.
  RoundFilter of_base, of_cand;
  of_base.team = of_cand.team = "alpha";
  of_base.collection_id = "c-base";
  of_cand.collection_id = "c-cand";
  auto rounds = store_->ListRounds(of_base);
  auto cand = store_->ListRounds(of_cand);
  ASSERT_TRUE(rounds.ok() && cand.ok());
  v1::CompareRoundsRequest rr;
  rr.set_baseline_round_id(rounds->rounds[0].id());
  rr.set_candidate_round_id(cand->rounds[0].id());
  auto one = queries_->CompareRounds("alpha", rr);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->comparison().duration().threshold_source(), "calibrated");
  v1::CompareManyRequest many;
  many.set_baseline_collection_id("c-base");
  many.add_candidate_collection_ids("c-cand");
  auto m = queries_->CompareMany("alpha", many);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->candidates(0).comparison().comparisons(0).duration().threshold_source(),
            "calibrated");

  // The request's own threshold applies as given.
  req.mutable_options()->set_duration_threshold_pct(2);
  auto explicit_2 = queries_->CompareCollections("alpha", req);
  ASSERT_TRUE(explicit_2.ok());
  const v1::DurationComparison& d2 = explicit_2->comparisons(0).duration();
  EXPECT_EQ(d2.verdict(), v1::VERDICT_REGRESSED);
  EXPECT_EQ(d2.threshold_source(), "request");
  EXPECT_DOUBLE_EQ(d2.threshold_pct(), 2);
  EXPECT_TRUE(absl::StrContains(d2.rule(), "(request)")) << d2.rule();

  // A candidate measured on another SoC does not match the spread: the default applies (and
  // the fingerprint makes it NOT_COMPARABLE anyway).
  AddCollection("c-a3");
  RunQueued([](const std::string&) { return 106.0; }, "A3");
  req.clear_options();
  req.set_candidate_collection_id("c-a3");
  auto other_soc = queries_->CompareCollections("alpha", req);
  ASSERT_TRUE(other_soc.ok());
  EXPECT_EQ(other_soc->comparisons(0).duration().threshold_source(), "default");
}

INSTANTIATE_TEST_SUITE_P(Backends, CalibrationsTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const auto& param_info) {
                           return param_info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
                         });

}  // namespace
}  // namespace npuperf::server
