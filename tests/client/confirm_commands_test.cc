// client/confirm_commands.cc against StrictMock stubs: `confirm` requests one confirmation and
// waits for it, `confirmation ID` reads one, and `compare --confirm` / `regressions --confirm` pass
// a bot whose regression was NOT_CONFIRMED while a CONFIRMED or UNCONFIRMED one still fails it.
#include "client/confirm_commands.h"

#include <atomic>
#include <sstream>
#include <thread>

#include "client/compare_commands.h"
#include "nlohmann/json.hpp"
#include "tests/client/mock_session.h"

namespace npuperf::client {
namespace {

using ::npuperf::testing::EqualsProto;
using ::npuperf::testing::JsonConfig;
using ::npuperf::testing::MockSession;
using ::npuperf::testing::Proto;
using ::npuperf::testing::Reply;
using ::testing::_;
using ::testing::HasSubstr;

v1::Confirmation Confirmation(v1::ConfirmationState state) {
  auto c =
      Proto<v1::Confirmation>(R"pb(
        id: 7
        baseline_round_id: 41
        candidate_round_id: 42
        operator_name: "add"
        case_id: "p1"
        original_verdict: VERDICT_REGRESSED
        device { host: "h2" device_id: 3 soc: "Ascend910B2" }
        steps {
          side: "baseline"
          collection_id: "c-a"
          state: COLLECTION_STATE_SUCCEEDED
          round_id: 50
        }
        steps {
          side: "candidate"
          collection_id: "c-b"
          state: COLLECTION_STATE_SUCCEEDED
          round_id: 51
        })pb");
  c.set_state(state);
  if (state == v1::CONFIRMATION_STATE_NOT_CONFIRMED) {
    c.set_reason("the reruns gave STABLE (p=0.6>=0.01), not REGRESSED");
    c.mutable_rerun()->mutable_duration()->set_baseline_us(100);
    c.mutable_rerun()->mutable_duration()->set_candidate_us(100.5);
  }
  return c;
}

v1::RequestConfirmationResponse Requested(v1::ConfirmationState state) {
  v1::RequestConfirmationResponse r;
  *r.mutable_confirmation() = Confirmation(state);
  r.set_created(true);
  return r;
}

v1::GetConfirmationResponse Read(v1::ConfirmationState state) {
  v1::GetConfirmationResponse r;
  *r.mutable_confirmation() = Confirmation(state);
  return r;
}

TEST(ConfirmTest, RequestsOneAndExitsByItsOutcome) {
  const std::pair<v1::ConfirmationState, int> cases[] = {
      {v1::CONFIRMATION_STATE_CONFIRMED, kExitRegressed},
      {v1::CONFIRMATION_STATE_NOT_CONFIRMED, kExitOk},
      {v1::CONFIRMATION_STATE_UNCONFIRMED, kExitNoVerdict},
  };
  for (const auto& [state, code] : cases) {
    MockSession m;
    EXPECT_CALL(m.queries(), RequestConfirmation(_,
                                                 EqualsProto(Proto<v1::RequestConfirmationRequest>(
                                                     R"pb(baseline_round_id: 41
                                                          candidate_round_id: 42
                                                          pairs: 3
                                                          options {})pb")),
                                                 _))
        .WillOnce(Reply(Requested(state)));
    std::ostringstream out, err;
    ConfirmArgs a;
    a.baseline = "41";
    a.candidate = "42";
    a.pairs = 3;
    EXPECT_EQ(RunConfirm(m.session(), a, out, err), code) << v1::ConfirmationState_Name(state);
  }
}

TEST(ConfirmTest, WaitsWhilePendingAndPrintsTheOutcomeAndSteps) {
  MockSession m;
  EXPECT_CALL(m.queries(), RequestConfirmation(_, _, _))
      .WillOnce(Reply(Requested(v1::CONFIRMATION_STATE_PENDING)));
  EXPECT_CALL(
      m.queries(),
      GetConfirmation(_, EqualsProto(Proto<v1::GetConfirmationRequest>("confirmation_id: 7")), _))
      .WillOnce(Reply(Read(v1::CONFIRMATION_STATE_PENDING)))
      .WillOnce(Reply(Read(v1::CONFIRMATION_STATE_NOT_CONFIRMED)));
  std::atomic<bool> done{false};
  std::thread ticker([&] {  // the fake clock's sleeps end when it moves
    while (!done) {
      m.clock().Advance(kConfirmPoll);
      std::this_thread::yield();
    }
  });
  std::ostringstream out, err;
  ConfirmArgs a;
  a.baseline = "41";
  a.candidate = "42";
  const int code = RunConfirm(m.session(), a, out, err);
  done = true;
  ticker.join();
  EXPECT_EQ(code, kExitOk);
  EXPECT_THAT(out.str(),
              HasSubstr("confirmation 7 add/p1 REGRESSED -> NOT_CONFIRMED: the reruns gave STABLE "
                        "(p=0.6>=0.01), not REGRESSED (reruns on h2 device 3: 100.000 -> 100.500 "
                        "us)\n"));
  EXPECT_THAT(out.str(), HasSubstr("candidate c-b"));
  EXPECT_THAT(err.str(), HasSubstr("waiting for"));
}

TEST(ConfirmTest, NoWaitPrintsItPendingAndExitsFour) {
  MockSession m(JsonConfig());
  EXPECT_CALL(m.queries(), RequestConfirmation(_, _, _))
      .WillOnce(Reply(Requested(v1::CONFIRMATION_STATE_PENDING)));
  std::ostringstream out, err;
  ConfirmArgs a;
  a.baseline = "41";
  a.candidate = "42";
  a.wait = false;
  EXPECT_EQ(RunConfirm(m.session(), a, out, err), kExitNoVerdict);
  EXPECT_EQ(nlohmann::json::parse(out.str())["state"], "CONFIRMATION_STATE_PENDING");
}

TEST(ConfirmTest, UsageErrorsAndRefusals) {
  MockSession m;
  std::ostringstream out, err;
  ConfirmArgs a;
  a.baseline = "41";
  a.candidate = "c-1";
  EXPECT_EQ(RunConfirm(m.session(), a, out, err), kExitUsage);
  EXPECT_EQ(RunConfirmation(m.session(), {"x", false, kDefaultConfirmTimeout}, out, err),
            kExitUsage);
  EXPECT_CALL(m.queries(), RequestConfirmation(_, _, _))
      .WillOnce(::testing::Return(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                               "rounds 41 and 42 compare VERDICT_STABLE")));
  a.candidate = "42";
  EXPECT_EQ(RunConfirm(m.session(), a, out, err), kExitError);
  EXPECT_THAT(err.str(), HasSubstr("VERDICT_STABLE"));
}

TEST(ConfirmTest, ConfirmationIdReadsItOnce) {
  MockSession m;
  EXPECT_CALL(m.queries(), GetConfirmation(_, _, _))
      .WillOnce(Reply(Read(v1::CONFIRMATION_STATE_CONFIRMED)));
  std::ostringstream out, err;
  EXPECT_EQ(RunConfirmation(m.session(), {"7", false, kDefaultConfirmTimeout}, out, err),
            kExitRegressed);
  EXPECT_THAT(out.str(), HasSubstr("REGRESSED -> CONFIRMED"));
}

v1::CompareRoundsResponse RegressedRounds() {
  return Proto<v1::CompareRoundsResponse>(R"pb(
    comparison {
      baseline_round_id: 41
      candidate_round_id: 42
      operator_name: "add"
      case_id: "p1"
      verdict: VERDICT_REGRESSED
      rule: "slower"
    })pb");
}

TEST(ConfirmTest, CompareConfirmPassesANotConfirmedRegressionAndFailsAConfirmedOne) {
  for (auto [state, code] : {std::pair{v1::CONFIRMATION_STATE_NOT_CONFIRMED, kExitOk},
                             std::pair{v1::CONFIRMATION_STATE_CONFIRMED, kExitRegressed},
                             std::pair{v1::CONFIRMATION_STATE_UNCONFIRMED, kExitRegressed}}) {
    MockSession m(JsonConfig());
    EXPECT_CALL(m.queries(), CompareRounds(_, _, _)).WillOnce(Reply(RegressedRounds()));
    EXPECT_CALL(m.queries(), RequestConfirmation(_, _, _)).WillOnce(Reply(Requested(state)));
    std::ostringstream out, err;
    VerdictArgs v;
    v.confirm = true;
    EXPECT_EQ(RunCompare(m.session(), "41", "42", v, out, err), code);
    const auto j = nlohmann::json::parse(out.str());
    EXPECT_EQ(j["exit_code"], code);
    ASSERT_EQ(j["confirmations"].size(), 1u);
    EXPECT_EQ(j["confirmations"][0]["state"], v1::ConfirmationState_Name(state));
  }
}

TEST(ConfirmTest, RegressionsConfirmCountsOnlyConfirmedOrUnconfirmedNewOnes) {
  MockSession m;
  auto resp = Proto<v1::ListRegressionsResponse>(R"pb(
    regressions {
      baseline_round_id: 1
      candidate_round_id: 2
      operator_name: "a"
      verdict: VERDICT_REGRESSED
    }
    regressions {
      baseline_round_id: 3
      candidate_round_id: 4
      operator_name: "b"
      verdict: VERDICT_REGRESSED
    }
    compared: 2
    counts { matched: 2 comparable: 2 regressed: 2 }
    confirmations {
      id: 1
      baseline_round_id: 1
      candidate_round_id: 2
      state: CONFIRMATION_STATE_NOT_CONFIRMED
    }
    confirmations {
      id: 2
      baseline_round_id: 3
      candidate_round_id: 4
      state: CONFIRMATION_STATE_NOT_CONFIRMED
    })pb");
  EXPECT_CALL(m.queries(), ListRegressions(_, _, _))
      .WillOnce([&](auto*, const v1::ListRegressionsRequest& req, auto* out) {
        EXPECT_TRUE(req.confirm());
        *out = resp;
        return grpc::Status::OK;
      });
  std::ostringstream out, err;
  RegressionsArgs a;
  a.baseline_label = "branch=main";
  a.verdict.confirm = true;
  EXPECT_EQ(RunRegressions(m.session(), a, out, err), kExitOk) << out.str();
  EXPECT_THAT(out.str(), HasSubstr("0 confirmed, 2 not confirmed"));
  resp.mutable_confirmations(1)->set_state(v1::CONFIRMATION_STATE_CONFIRMED);
  MockSession again;
  EXPECT_CALL(again.queries(), ListRegressions(_, _, _)).WillOnce(Reply(resp));
  std::ostringstream out2, err2;
  EXPECT_EQ(RunRegressions(again.session(), a, out2, err2), kExitRegressed) << out2.str();
}

}  // namespace
}  // namespace npuperf::client
