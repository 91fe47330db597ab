// client/triage_commands.cc against StrictMock stubs: `triage ID` reads the regression first
// and sends its state as the expected one; a lost race exits 1, another team's regression 6;
// `regressions` fails a bot only on new regressions, hides closed ones unless --all and prints
// the precision with --precision.
#include "client/triage_commands.h"

#include <sstream>

#include "client/compare_commands.h"
#include "common/status_util.h"
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

v1::GetRegressionResponse Current(v1::RegressionState state) {
  auto r = Proto<v1::GetRegressionResponse>(R"pb(
    regression {
      id: 12
      operator_name: "add"
      case_id: "p1"
      baseline_label: "branch=main"
      rule: "duration"
      detected_at { seconds: 1764633600 }
      last_seen_at { seconds: 1764720000 }
      first_round_id: 42
      last_round_id: 57
      seen_rounds: 2
    }
    transitions {
      to_state: REGRESSION_STATE_DETECTED
      actor: "npuperf"
      note: "regressed in round 42"
      at { seconds: 1764633600 }
    })pb");
  r.mutable_regression()->set_state(state);
  return r;
}

TEST(TriageTest, SendsTheStateItReadAsTheExpectedOne) {
  MockSession m;
  EXPECT_CALL(m.queries(), GetRegression(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                                         EqualsProto(Proto<v1::GetRegressionRequest>("id: 12")), _))
      .WillOnce(Reply(Current(v1::REGRESSION_STATE_DETECTED)));
  v1::TriageRegressionResponse moved;
  *moved.mutable_regression() = Current(v1::REGRESSION_STATE_ACKNOWLEDGED).regression();
  EXPECT_CALL(m.queries(), TriageRegression(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                                            EqualsProto(Proto<v1::TriageRegressionRequest>(R"pb(
                                              id: 12
                                              expected_state: REGRESSION_STATE_DETECTED
                                              new_state: REGRESSION_STATE_ACKNOWLEDGED
                                              note: "on it")pb")),
                                            _))
      .WillOnce(Reply(moved));
  std::ostringstream out, err;
  EXPECT_EQ(RunTriage(m.session(), {"12", v1::REGRESSION_STATE_ACKNOWLEDGED, "on it"}, out, err),
            kExitOk);
  EXPECT_EQ(out.str(),
            "regression 12 add/p1 against branch=main (duration): DETECTED -> ACKNOWLEDGED\n");
  EXPECT_EQ(err.str(), "");
}

TEST(TriageTest, WithoutAMoveItShowsTheRegressionAndItsTransitions) {
  MockSession m;
  EXPECT_CALL(m.queries(), GetRegression(_, _, _))
      .WillOnce(Reply(Current(v1::REGRESSION_STATE_DETECTED)));
  std::ostringstream out, err;
  EXPECT_EQ(RunTriage(m.session(), {"12", v1::REGRESSION_STATE_UNSPECIFIED, ""}, out, err),
            kExitOk);
  EXPECT_EQ(out.str(),
            "regression 12 add/p1 against branch=main (duration): DETECTED\n"
            "  detected 2025-12-02T00:00:00Z in round 42, last seen 2025-12-03T00:00:00Z in round "
            "57 (2 rounds)\n"
            "  2025-12-02T00:00:00Z npuperf: DETECTED \"regressed in round 42\"\n");
}

TEST(TriageTest, JsonPrintsTheResponse) {
  MockSession m(JsonConfig());
  EXPECT_CALL(m.queries(), GetRegression(_, _, _))
      .WillOnce(Reply(Current(v1::REGRESSION_STATE_DETECTED)));
  std::ostringstream out, err;
  EXPECT_EQ(RunTriage(m.session(), {"12", v1::REGRESSION_STATE_UNSPECIFIED, ""}, out, err),
            kExitOk);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["regression"]["state"], "REGRESSION_STATE_DETECTED");
  EXPECT_EQ(j["transitions"].size(), 1u);
}

TEST(TriageTest, TheLoserOfARaceExitsOneAndAnotherTeamsRegressionSix) {
  MockSession m;
  EXPECT_CALL(m.queries(), GetRegression(_, _, _))
      .WillOnce(Reply(Current(v1::REGRESSION_STATE_DETECTED)))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::NOT_FOUND, "regression 13 not found")));
  EXPECT_CALL(m.queries(), TriageRegression(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                    "regression 12 is ACKNOWLEDGED, not DETECTED")));
  std::ostringstream out, err;
  EXPECT_EQ(RunTriage(m.session(), {"12", v1::REGRESSION_STATE_WONT_FIX, ""}, out, err),
            kExitError);
  EXPECT_EQ(RunTriage(m.session(), {"13", v1::REGRESSION_STATE_WONT_FIX, ""}, out, err),
            kExitNotFound);
  EXPECT_EQ(err.str(),
            "npuperf: FAILED_PRECONDITION: regression 12 is ACKNOWLEDGED, not DETECTED\n"
            "npuperf: NOT_FOUND: regression 13 not found\n");
}

TEST(TriageTest, AnIdThatIsNoNumberIsAUsageErrorWithoutACall) {
  MockSession m;
  std::ostringstream out, err;
  for (const char* id : {"abc", "0", "-3", "12x"}) {
    EXPECT_EQ(RunTriage(m.session(), {id, v1::REGRESSION_STATE_FIXED, ""}, out, err), kExitUsage)
        << id;
  }
  EXPECT_THAT(err.str(), HasSubstr("npuperf triage: ID must be a regression id"));
}

// ---- regressions and the bot's exit code ------------------------------------

v1::ListRegressionsResponse Listing(v1::RegressionState tracked_state) {
  auto reply = Proto<v1::ListRegressionsResponse>(R"pb(
    compared: 2
    baseline_description: "baseline branch=main (collection c-1)"
    counts { matched: 2 comparable: 2 regressed: 1 stable: 1 }
    regressions {
      candidate_round_id: 57
      operator_name: "add"
      case_id: "p1"
      verdict: VERDICT_REGRESSED
    }
    precision { rule: "duration" confirmed: 3 false_positives: 1 precision: 0.75 })pb");
  *reply.add_tracked() = Current(tracked_state).regression();
  return reply;
}

TEST(RegressionsTriageTest, AnAcknowledgedRegressionDoesNotFailTheBotAgain) {
  MockSession m;
  EXPECT_CALL(m.queries(), ListRegressions(_, _, _))
      .WillOnce(Reply(Listing(v1::REGRESSION_STATE_DETECTED)))
      .WillOnce(Reply(Listing(v1::REGRESSION_STATE_ACKNOWLEDGED)));
  RegressionsArgs a;
  a.baseline_label = "branch=main";
  std::ostringstream first, second, err;
  EXPECT_EQ(RunRegressions(m.session(), a, first, err), kExitRegressed);
  EXPECT_THAT(first.str(), HasSubstr("\nregression 12 add/p1: DETECTED, seen in 2 rounds since "
                                     "2025-12-02T00:00:00Z\n"));
  EXPECT_EQ(RunRegressions(m.session(), a, second, err), kExitOk);
  EXPECT_THAT(second.str(), HasSubstr("regression 12 add/p1: ACKNOWLEDGED"));
  EXPECT_THAT(second.str(), HasSubstr("; 0 new, 1 already triaged\n"));
}

TEST(RegressionsTriageTest, AllAsksForClosedOnesAndPrecisionPrintsEachRule) {
  MockSession m;
  auto hidden = Proto<v1::ListRegressionsResponse>(R"pb(
    compared: 2
    counts { matched: 2 comparable: 2 regressed: 1 stable: 1 }
    hidden_closed: 1
    precision { rule: "duration" })pb");
  hidden.mutable_precision(0)->set_precision(std::nan(""));
  EXPECT_CALL(m.queries(), ListRegressions(_, EqualsProto(Proto<v1::ListRegressionsRequest>(R"pb(
                                             baseline_label: "branch=main"
                                             include_closed: true
                                             options {})pb")),
                                           _))
      .WillOnce(Reply(Listing(v1::REGRESSION_STATE_WONT_FIX)));
  EXPECT_CALL(m.queries(), ListRegressions(_, EqualsProto(Proto<v1::ListRegressionsRequest>(R"pb(
                                             baseline_label: "branch=main"
                                             options {})pb")),
                                           _))
      .WillOnce(Reply(hidden));
  RegressionsArgs a;
  a.baseline_label = "branch=main";
  a.include_closed = true;
  a.precision = true;
  std::ostringstream all, quiet, err;
  EXPECT_EQ(RunRegressions(m.session(), a, all, err), kExitOk);
  EXPECT_THAT(all.str(), HasSubstr("regression 12 add/p1: WONT_FIX"));
  EXPECT_THAT(all.str(), HasSubstr("\nprecision duration: 0.75 (3 confirmed, 1 false positive(s) "
                                   "among triaged regressions)\n"));
  a.include_closed = false;
  EXPECT_EQ(RunRegressions(m.session(), a, quiet, err), kExitOk);
  EXPECT_THAT(quiet.str(), HasSubstr("1 regressed case(s) hidden: their regression is WONT_FIX or "
                                     "FALSE_POSITIVE (--all lists them)\n"));
  EXPECT_THAT(quiet.str(), HasSubstr("precision duration: unknown (0 confirmed"));
}

TEST(RegressionsTriageTest, UntrackedListingsCountEveryRegressionAsNew) {
  v1::ListRegressionsResponse since = Listing(v1::REGRESSION_STATE_ACKNOWLEDGED);
  since.clear_tracked();
  EXPECT_EQ(NewRegressions(since), 1);
  v1::ListRegressionsResponse untracked = Listing(v1::REGRESSION_STATE_ACKNOWLEDGED);
  untracked.mutable_tracked(0)->set_id(0);  // the candidate round lacks the baseline's label
  EXPECT_EQ(NewRegressions(untracked), 1);
  EXPECT_EQ(NewRegressions(Listing(v1::REGRESSION_STATE_FALSE_POSITIVE)), 0);
}

}  // namespace
}  // namespace npuperf::client
