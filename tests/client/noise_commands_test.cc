// client/noise_commands.cc against StrictMock stubs: `calibrate` starts a calibration (and with
// --wait polls it to the end: exit 0 SUCCEEDED, 1 FAILED), --every starts one per period and
// goes on after a failed one; `noise` prints the spreads; ThresholdText is what compare and
// regressions print beside a verdict.
#include "client/noise_commands.h"

#include <cmath>
#include <sstream>
#include <thread>

#include "nlohmann/json.hpp"
#include "tests/client/mock_session.h"

namespace npuperf::client {
namespace {

using ::npuperf::testing::EqualsProto;
using ::npuperf::testing::HasDeadline;
using ::npuperf::testing::JsonConfig;
using ::npuperf::testing::kDefaultCallTimeout;
using ::npuperf::testing::MockSession;
using ::npuperf::testing::Proto;
using ::npuperf::testing::Reply;
using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Return;

constexpr char kSpread[] = R"pb(
  soc: "Ascend910B2"
  mode: "quick"
  operator_name: "add"
  case_id: "p0"
  family: "duration"
  spread: 1.3
  rounds: 5
  threshold: 3.9
  expected_false_alarm_rate: 0.0032507
  calibration_id: 7)pb";

v1::Calibration CalibrationIn(v1::CalibrationState state, const std::string& reason = "") {
  auto c = Proto<v1::Calibration>(R"pb(
    id: 7
    source_collection_id: "c-0123456789ab"
    runs: 3
    collection_ids: "c-a"
    collection_ids: "c-b"
    collection_ids: "c-c")pb");
  c.set_state(state);
  c.set_reason(reason);
  if (state == v1::CALIBRATION_STATE_SUCCEEDED) *c.add_spreads() = Proto<v1::NoiseSpread>(kSpread);
  return c;
}

template <typename Resp>
Resp With(const v1::Calibration& c) {
  Resp r;
  *r.mutable_calibration() = c;
  return r;
}

TEST(CalibrateTest, StartsOneAndPrintsIt) {
  MockSession m;
  EXPECT_CALL(m.queries(), StartCalibration(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                                            EqualsProto(Proto<v1::StartCalibrationRequest>(
                                                R"pb(collection_id: "c-0123456789ab" runs: 3)pb")),
                                            _))
      .WillOnce(Reply(With<v1::StartCalibrationResponse>(CalibrationIn(
          v1::CALIBRATION_STATE_RUNNING, "waiting for A/A runs: 0 of 3 finished, 3 submitted"))));
  std::ostringstream out, err;
  CalibrateArgs a;
  a.collection_id = "c-0123456789ab";
  a.runs = 3;
  EXPECT_EQ(RunCalibrate(m.session(), a, out, err), kExitOk);
  EXPECT_EQ(out.str(),
            "calibration 7 of collection c-0123456789ab: RUNNING, 3 A/A runs (waiting for A/A "
            "runs: 0 of 3 finished, 3 submitted)\n  collections c-a c-b c-c\n");
  EXPECT_EQ(err.str(), "");
}

TEST(CalibrateTest, WaitPollsUntilItFinishesAndExitsByItsState) {
  for (auto final_state : {v1::CALIBRATION_STATE_SUCCEEDED, v1::CALIBRATION_STATE_FAILED}) {
    MockSession m;
    EXPECT_CALL(m.queries(), StartCalibration(_, _, _))
        .WillOnce(Reply(With<v1::StartCalibrationResponse>(
            CalibrationIn(v1::CALIBRATION_STATE_RUNNING, "0 of 3 finished"))));
    EXPECT_CALL(
        m.queries(),
        GetCalibration(_, EqualsProto(Proto<v1::GetCalibrationRequest>("calibration_id: 7")), _))
        .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAVAILABLE, "restarting")))
        .WillOnce(Reply(With<v1::GetCalibrationResponse>(
            CalibrationIn(v1::CALIBRATION_STATE_RUNNING, "2 of 3 finished"))))
        .WillOnce(Reply(With<v1::GetCalibrationResponse>(CalibrationIn(
            final_state, final_state == v1::CALIBRATION_STATE_FAILED ? "too few rounds" : ""))));
    std::ostringstream out, err;
    CalibrateArgs a;
    a.collection_id = "c-0123456789ab";
    a.wait = true;
    a.poll = std::chrono::seconds(0);
    const int code = RunCalibrate(m.session(), a, out, err);
    EXPECT_EQ(err.str(),
              "npuperf: calibration 7: 0 of 3 finished\nnpuperf: calibration 7: 2 of 3 finished\n");
    if (final_state == v1::CALIBRATION_STATE_SUCCEEDED) {
      EXPECT_EQ(code, kExitOk);
      EXPECT_THAT(out.str(), HasSubstr("calibration 7 of collection c-0123456789ab: SUCCEEDED"));
      EXPECT_THAT(out.str(), HasSubstr("add/p0"));
      EXPECT_THAT(out.str(), HasSubstr("1.3 %"));
      EXPECT_THAT(out.str(), HasSubstr("3.9 %"));
      EXPECT_THAT(out.str(), HasSubstr("0.325%"));
    } else {
      EXPECT_EQ(code, kExitError);
      EXPECT_THAT(out.str(), HasSubstr("FAILED, 3 A/A runs (too few rounds)"));
    }
  }
}

TEST(CalibrateTest, ErrorsExitAsTheOtherCommands) {
  MockSession m(JsonConfig());
  EXPECT_CALL(m.queries(), StartCalibration(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::NOT_FOUND, "collection c-x not found")))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                    "collection_id: collection c-x is in PROFILE_MODE_DISCOVER")));
  std::ostringstream out, err;
  CalibrateArgs a;
  a.collection_id = "c-x";
  EXPECT_EQ(RunCalibrate(m.session(), a, out, err), kExitNotFound);
  EXPECT_EQ(nlohmann::json::parse(out.str())["error"]["code"], "NOT_FOUND");
  EXPECT_EQ(RunCalibrate(m.session(), a, out, err), kExitError);
  a.every = "soon";
  EXPECT_EQ(RunCalibrate(m.session(), a, out, err), kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("--every"));
}

TEST(CalibrateTest, EveryStartsOnePerPeriodAndGoesOnAfterAFailedOne) {
  MockSession m;
  const auto start = m.clock().MonotonicNow();
  // Each calibration takes an hour of the (fake) clock; the period is a day.
  auto started = [&m](v1::CalibrationState state) {
    return [&m, state](grpc::ClientContext*, const v1::StartCalibrationRequest&,
                       v1::StartCalibrationResponse* resp) {
      m.clock().Advance(std::chrono::hours(1));
      *resp = With<v1::StartCalibrationResponse>(CalibrationIn(state, "x"));
      return grpc::Status::OK;
    };
  };
  EXPECT_CALL(m.queries(), StartCalibration(_, _, _))
      .WillOnce(started(v1::CALIBRATION_STATE_FAILED))
      .WillOnce(started(v1::CALIBRATION_STATE_SUCCEEDED));
  std::ostringstream out, err;
  CalibrateArgs a;
  a.collection_id = "c-0123456789ab";
  a.every = "24h";
  a.count = 2;
  std::thread runner([&] { EXPECT_EQ(RunCalibrate(m.session(), a, out, err), kExitOk); });
  m.clock().AwaitWaiters(1);  // sleeping until the next period after the failed one
  EXPECT_EQ(m.clock().MonotonicNow() - start, std::chrono::hours(1));
  m.clock().Advance(std::chrono::hours(23));
  runner.join();
  EXPECT_THAT(out.str(), HasSubstr("FAILED"));
  EXPECT_THAT(out.str(), HasSubstr("SUCCEEDED"));
}

TEST(NoiseTest, PrintsTheSpreadsOrSaysThereAreNone) {
  MockSession m;
  v1::ListNoiseResponse resp;
  *resp.add_spreads() = Proto<v1::NoiseSpread>(kSpread);
  EXPECT_CALL(m.queries(),
              ListNoise(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                        EqualsProto(Proto<v1::ListNoiseRequest>(R"pb(operator_name: "add")pb")), _))
      .WillOnce(Reply(resp))
      .WillOnce(Reply(v1::ListNoiseResponse()));
  std::ostringstream out, err;
  EXPECT_EQ(RunNoise(m.session(), "add", out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("operator/case"));
  EXPECT_THAT(out.str(), HasSubstr("false_alarms"));
  EXPECT_THAT(out.str(), HasSubstr("add/p0"));
  EXPECT_THAT(out.str(), HasSubstr("Ascend910B2"));
  out.str("");
  EXPECT_EQ(RunNoise(m.session(), "add", out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("no measured noise"));
}

TEST(ThresholdTextTest, NamesTheThresholdAndWhereItCameFrom) {
  v1::DurationComparison d;
  EXPECT_EQ(ThresholdText(d), "");  // an older server
  d.set_threshold_source("default");
  d.set_threshold_pct(2);
  d.set_expected_false_alarm_rate(NAN);
  EXPECT_EQ(ThresholdText(d), "uncalibrated (default 2 %)");
  d.set_threshold_source("request");
  d.set_threshold_pct(5);
  EXPECT_EQ(ThresholdText(d), "threshold 5 % (request)");
  d.set_threshold_source("calibrated");
  d.set_threshold_pct(3.9);
  d.set_measured_spread_pct(1.3);
  d.set_expected_false_alarm_rate(0.006);
  EXPECT_EQ(ThresholdText(d),
            "calibrated: spread 1.3 %, threshold 3.9 %, expected false alarms 0.6 %");
}

}  // namespace
}  // namespace npuperf::client
