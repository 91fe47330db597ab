// Store conformance: calibrations and the noise they measured (issue 20, "Measured noise";
// migration 0016). A calibration is inserted RUNNING and finished once, by a compare-and-set
// that stores its spreads with it; a team sees only its own calibrations and spreads; verdicts
// read the newest spread per (soc, mode, operator, case, family).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

CalibrationRecord NewCalibration(const std::string& team, const std::string& source,
                                 int32_t runs = 5, int64_t now_ms = 1000) {
  CalibrationRecord c;
  c.team = team;
  c.source_collection_id = source;
  c.runs = runs;
  c.created_ms = now_ms;
  return c;
}

NoiseRecord Spread(const std::string& op, const std::string& family, double spread,
                   const std::string& soc = "A2", const std::string& mode = "standard",
                   const std::string& case_id = "p0") {
  NoiseRecord n;
  n.soc = soc;
  n.mode = mode;
  n.operator_name = op;
  n.case_id = case_id;
  n.family = family;
  n.spread = spread;
  n.rounds = 5;
  n.threshold = 3 * spread;
  n.far = 0.003;
  return n;
}

CalibrationOutcome Succeeded(const CalibrationRecord& c, std::vector<NoiseRecord> spreads,
                             int64_t now_ms = 2000) {
  CalibrationOutcome o;
  o.team = c.team;
  o.id = c.id;
  o.state = v1::CALIBRATION_STATE_SUCCEEDED;
  o.collection_ids = {"c-000000000001", "c-000000000002", "c-000000000003"};
  o.spreads = std::move(spreads);
  o.now_ms = now_ms;
  return o;
}

TEST_P(StoreConformanceTest, ACalibrationIsInsertedRunningAndReadBackByItsTeamOnly) {
  ASSERT_OK_AND_ASSIGN(c, store_->InsertCalibration(NewCalibration("alpha", "c-aaaaaaaaaaaa", 7)));
  EXPECT_GT(c.id, 0);
  EXPECT_EQ(c.state, v1::CALIBRATION_STATE_RUNNING);
  ASSERT_OK_AND_ASSIGN(got, store_->GetCalibration("alpha", c.id));
  EXPECT_EQ(got.team, "alpha");
  EXPECT_EQ(got.source_collection_id, "c-aaaaaaaaaaaa");
  EXPECT_EQ(got.runs, 7);
  EXPECT_EQ(got.state, v1::CALIBRATION_STATE_RUNNING);
  EXPECT_EQ(got.created_ms, 1000);
  EXPECT_EQ(got.finished_ms, 0);
  EXPECT_TRUE(got.collection_ids.empty());
  EXPECT_TRUE(got.spreads.empty());
  // Another team's calibration does not exist for beta; nor does an unknown id.
  EXPECT_TRUE(absl::IsNotFound(store_->GetCalibration("beta", c.id).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->GetCalibration("alpha", c.id + 100).status()));
  ASSERT_OK_AND_ASSIGN(second, store_->InsertCalibration(NewCalibration("alpha", "c-b")));
  EXPECT_GT(second.id, c.id);
}

TEST_P(StoreConformanceTest, FinishingStoresStateCollectionsAndSpreadsTogetherOnce) {
  ASSERT_OK_AND_ASSIGN(c, store_->InsertCalibration(NewCalibration("alpha", "c-a")));
  CalibrationOutcome o =
      Succeeded(c, {Spread("add", "duration", 1.3), Spread("add", "ratio", 0.4)}, 5000);
  ASSERT_EQ(store_->FinishCalibration(o), absl::OkStatus());
  ASSERT_OK_AND_ASSIGN(got, store_->GetCalibration("alpha", c.id));
  EXPECT_EQ(got.state, v1::CALIBRATION_STATE_SUCCEEDED);
  EXPECT_EQ(got.finished_ms, 5000);
  EXPECT_EQ(got.collection_ids, o.collection_ids);  // in order
  ASSERT_EQ(got.spreads.size(), 2u);
  EXPECT_EQ(got.spreads[0].family, "duration");
  EXPECT_DOUBLE_EQ(got.spreads[0].spread, 1.3);
  EXPECT_DOUBLE_EQ(got.spreads[0].threshold, 3.9000000000000004);
  EXPECT_DOUBLE_EQ(got.spreads[0].far, 0.003);
  EXPECT_EQ(got.spreads[0].rounds, 5);
  EXPECT_EQ(got.spreads[0].calibration_id, c.id);  // set by the store
  EXPECT_EQ(got.spreads[0].measured_ms, 5000);
  EXPECT_EQ(got.spreads[1].family, "ratio");

  // A second finish (another replica, or a stale caller) is refused and writes nothing.
  CalibrationOutcome again = Succeeded(c, {Spread("add", "duration", 9)}, 6000);
  again.state = v1::CALIBRATION_STATE_FAILED;
  again.reason = "late";
  absl::Status s = store_->FinishCalibration(again);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "SUCCEEDED")) << s;
  ASSERT_OK_AND_ASSIGN(after, store_->GetCalibration("alpha", c.id));
  EXPECT_EQ(after.state, v1::CALIBRATION_STATE_SUCCEEDED);
  EXPECT_EQ(after.spreads.size(), 2u);
  EXPECT_EQ(after.finished_ms, 5000);
}

TEST_P(StoreConformanceTest, FinishingIsRefusedForAnotherTeamAnUnknownIdOrARunningState) {
  ASSERT_OK_AND_ASSIGN(c, store_->InsertCalibration(NewCalibration("alpha", "c-a")));
  CalibrationOutcome o = Succeeded(c, {Spread("add", "duration", 1)});
  o.team = "beta";
  EXPECT_TRUE(absl::IsNotFound(store_->FinishCalibration(o)));
  o.team = "alpha";
  o.id = c.id + 100;
  EXPECT_TRUE(absl::IsNotFound(store_->FinishCalibration(o)));
  o.id = c.id;
  o.state = v1::CALIBRATION_STATE_RUNNING;
  EXPECT_TRUE(absl::IsInvalidArgument(store_->FinishCalibration(o)));
  // None of those wrote anything.
  ASSERT_OK_AND_ASSIGN(got, store_->GetCalibration("alpha", c.id));
  EXPECT_EQ(got.state, v1::CALIBRATION_STATE_RUNNING);
  EXPECT_TRUE(got.spreads.empty());
  ASSERT_OK_AND_ASSIGN(noise, store_->ListNoise("beta", "", 100));
  EXPECT_TRUE(noise.empty());
  // A failed calibration keeps its reason and stores no spread.
  o.state = v1::CALIBRATION_STATE_FAILED;
  o.reason = "fewer than 3 A/A rounds";
  o.spreads.clear();
  ASSERT_EQ(store_->FinishCalibration(o), absl::OkStatus());
  ASSERT_OK_AND_ASSIGN(failed, store_->GetCalibration("alpha", c.id));
  EXPECT_EQ(failed.state, v1::CALIBRATION_STATE_FAILED);
  EXPECT_EQ(failed.reason, "fewer than 3 A/A rounds");
}

TEST_P(StoreConformanceTest, RunningCalibrationsOfEveryTeamAreListedOldestFirstUpToTheLimit) {
  ASSERT_OK_AND_ASSIGN(a, store_->InsertCalibration(NewCalibration("alpha", "c-a")));
  ASSERT_OK_AND_ASSIGN(b, store_->InsertCalibration(NewCalibration("beta", "c-b")));
  ASSERT_OK_AND_ASSIGN(done, store_->InsertCalibration(NewCalibration("alpha", "c-c")));
  ASSERT_OK_AND_ASSIGN(d, store_->InsertCalibration(NewCalibration("gamma", "c-d")));
  ASSERT_EQ(store_->FinishCalibration(Succeeded(done, {})), absl::OkStatus());
  ASSERT_OK_AND_ASSIGN(all, store_->ListRunningCalibrations(10));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, a.id);
  EXPECT_EQ(all[1].id, b.id);
  EXPECT_EQ(all[1].team, "beta");
  EXPECT_EQ(all[2].id, d.id);
  ASSERT_OK_AND_ASSIGN(two, store_->ListRunningCalibrations(2));
  EXPECT_EQ(two.size(), 2u);
}

TEST_P(StoreConformanceTest, NoiseListsTheNewestSpreadPerSocModeCaseAndFamilyOfTheTeam) {
  ASSERT_OK_AND_ASSIGN(old, store_->InsertCalibration(NewCalibration("alpha", "c-a")));
  ASSERT_EQ(
      store_->FinishCalibration(Succeeded(
          old,
          {Spread("add", "duration", 5), Spread("add", "ratio", 2), Spread("mul", "duration", 1)},
          1000)),
      absl::OkStatus());
  ASSERT_OK_AND_ASSIGN(next, store_->InsertCalibration(NewCalibration("alpha", "c-a")));
  ASSERT_EQ(store_->FinishCalibration(
                Succeeded(next,
                          {Spread("add", "duration", 1.5), Spread("add", "duration", 7, "A3"),
                           Spread("add", "duration", 2.5, "A2", "quick")},
                          2000)),
            absl::OkStatus());
  ASSERT_OK_AND_ASSIGN(other, store_->InsertCalibration(NewCalibration("beta", "c-b")));
  ASSERT_EQ(store_->FinishCalibration(Succeeded(other, {Spread("add", "duration", 40)})),
            absl::OkStatus());

  ASSERT_OK_AND_ASSIGN(all, store_->ListNoise("alpha", "", 100));
  // add: A2/quick, A2/standard duration (newest: 1.5), A2/standard ratio (still the old one),
  // A3/standard; mul: A2/standard. Ordered by operator, case, soc, mode, family.
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].mode, "quick");
  EXPECT_DOUBLE_EQ(all[0].spread, 2.5);
  EXPECT_EQ(all[1].family, "duration");
  EXPECT_DOUBLE_EQ(all[1].spread, 1.5);
  EXPECT_EQ(all[1].calibration_id, next.id);
  EXPECT_EQ(all[2].family, "ratio");
  EXPECT_DOUBLE_EQ(all[2].spread, 2);
  EXPECT_EQ(all[2].calibration_id, old.id);
  EXPECT_EQ(all[3].soc, "A3");
  EXPECT_EQ(all[4].operator_name, "mul");
  for (const NoiseRecord& n : all) EXPECT_NE(n.spread, 40);  // beta's

  ASSERT_OK_AND_ASSIGN(mul, store_->ListNoise("alpha", "mul", 100));
  ASSERT_EQ(mul.size(), 1u);
  EXPECT_DOUBLE_EQ(mul[0].spread, 1);
  ASSERT_OK_AND_ASSIGN(limited, store_->ListNoise("alpha", "", 2));
  EXPECT_EQ(limited.size(), 2u);
  ASSERT_OK_AND_ASSIGN(beta, store_->ListNoise("beta", "", 100));
  ASSERT_EQ(beta.size(), 1u);
  EXPECT_DOUBLE_EQ(beta[0].spread, 40);
}

TEST_P(StoreConformanceTest, NoiseOfCasesReadsOnlyTheNamedCasesOfTheTeam) {
  ASSERT_OK_AND_ASSIGN(c, store_->InsertCalibration(NewCalibration("alpha", "c-a")));
  ASSERT_EQ(
      store_->FinishCalibration(Succeeded(
          c, {Spread("add", "duration", 1), Spread("add", "duration", 2, "A2", "standard", "p1"),
              Spread("mul", "duration", 3), Spread("a'b\"c", "duration", 4)})),
      absl::OkStatus());
  ASSERT_OK_AND_ASSIGN(got, store_->NoiseOfCases("alpha", {"add/p1", "mul/p0", "nope/p0"}));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].operator_name, "add");
  EXPECT_EQ(got[0].case_id, "p1");
  EXPECT_EQ(got[1].operator_name, "mul");
  // Names are data, never SQL.
  ASSERT_OK_AND_ASSIGN(quoted, store_->NoiseOfCases("alpha", {"a'b\"c/p0"}));
  ASSERT_EQ(quoted.size(), 1u);
  EXPECT_DOUBLE_EQ(quoted[0].spread, 4);
  ASSERT_OK_AND_ASSIGN(none, store_->NoiseOfCases("beta", {"add/p1", "mul/p0"}));
  EXPECT_TRUE(none.empty());
  ASSERT_OK_AND_ASSIGN(empty, store_->NoiseOfCases("alpha", {}));
  EXPECT_TRUE(empty.empty());
}

TEST_P(StoreConformanceTest, TwoReplicasFinishingOneCalibrationAtOnceFinishItOnce) {
  UseSqliteFile();
  ASSERT_OK_AND_ASSIGN(c, store_->InsertCalibration(NewCalibration("alpha", "c-a")));
  ASSERT_OK_AND_ASSIGN(other, OpenStore());
  std::atomic<int> ok{0}, refused{0};
  auto finish = [&](Store* s, double spread) {
    absl::Status st = s->FinishCalibration(Succeeded(c, {Spread("add", "duration", spread)}));
    if (st.ok()) ++ok;
    if (absl::IsFailedPrecondition(st)) ++refused;
  };
  std::thread a(finish, store_.get(), 1.0);
  std::thread b(finish, other.get(), 2.0);
  a.join();
  b.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(refused.load(), 1);
  ASSERT_OK_AND_ASSIGN(got, store_->GetCalibration("alpha", c.id));
  EXPECT_EQ(got.spreads.size(), 1u);  // the winner's only
}

}  // namespace
}  // namespace npuperf::server
