// client/compare_commands.cc against StrictMock stubs: the bot contract's
// exit codes (0 ok, 3 regressed, 4 no verdict, 1 errors, 2 usage), the JSON
// envelope, the verdict table, and the deadline of every call. report: report_command_test.cc.
#include "client/compare_commands.h"

#include <sstream>

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

v1::RoundComparison Regressed() {
  return Proto<v1::RoundComparison>(R"pb(
    baseline_round_id: 41
    candidate_round_id: 42
    operator_name: "add"
    case_id: "p1"
    verdict: VERDICT_REGRESSED
    rule: "duration: slower by 8.0%, p < alpha"
    duration {
      baseline_us: 12.5
      candidate_us: 13.5
      ratio: 1.08
      ratio_ci_low: 1.05
      ratio_ci_high: 1.11
      p_value: 0.001
      baseline_samples_us: [ 12.4, 12.6 ]
      candidate_samples_us: [ 13.4, 13.6 ]
    }
    baseline_bound: "MTE2_BOUND"
    candidate_bound: "VEC_BOUND"
    bound_changed: true
    baseline_balance: "PASS"
    candidate_balance: "PASS"
    baseline_dvfs: "ok"
    candidate_dvfs: "ok"
    fingerprint_differences { field: "cann_version" baseline: "8.2" candidate: "8.3" }
    metric_deltas {
      group: "Memory"
      field: "ub_read_bw"
      baseline: 100
      candidate: 80
      delta: -20
      notable: true
    }
    metric_deltas { group: "Memory" field: "ub_write_bw" baseline: 50 candidate: 50 }
    flags: "bound_route_changed:MTE2_BOUND->VEC_BOUND")pb");
}

v1::CompareRoundsResponse RoundsReply(v1::Verdict verdict) {
  v1::CompareRoundsResponse r;
  *r.mutable_comparison() = Regressed();
  r.mutable_comparison()->set_verdict(verdict);
  return r;
}

// ---- compare --------------------------------------------------------------

TEST(CompareTest, TwoRoundsPrintTheComparisonAndExitThreeWhenRegressed) {
  MockSession m;
  auto req = Proto<v1::CompareRoundsRequest>(R"pb(
    baseline_round_id: 41
    candidate_round_id: 42
    options { alpha: 0.05 duration_threshold_pct: 3 ratio_threshold_pp: 2 })pb");
  EXPECT_CALL(m.queries(),
              CompareRounds(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)), EqualsProto(req), _))
      .WillOnce(Reply(RoundsReply(v1::VERDICT_REGRESSED)));
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(m.session(), "41", "42", {0.05, 3, 2}, out, err), kExitRegressed);
  EXPECT_EQ(
      out.str(),
      "round 41 -> 42  add/p1\n"
      "verdict REGRESSED: duration: slower by 8.0%, p < alpha\n"
      "duration 12.500 -> 13.500 us, ratio 1.080 [1.050, 1.110], p=0.001 (2 vs 2 samples)\n"
      "bound MTE2_BOUND -> VEC_BOUND  (changed)\n"
      "per-core PASS -> PASS\n"
      "dvfs ok -> ok\n"
      "fingerprint cann_version: 8.2 -> 8.3  (informative)\n"
      "notable metric changes:\n"
      "  Memory                 ub_read_bw                            100 -> 80           (-20)\n"
      "flag bound_route_changed:MTE2_BOUND->VEC_BOUND\n");
  EXPECT_EQ(err.str(), "");
}

TEST(CompareTest, AVerdictOnASuspectDeviceNamesTheConfirmationToRun) {
  MockSession m;
  v1::CompareRoundsResponse reply = RoundsReply(v1::VERDICT_REGRESSED);
  reply.mutable_comparison()->add_flags("device_suspect:candidate");
  EXPECT_CALL(m.queries(), CompareRounds(_, _, _)).WillOnce(Reply(reply));
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(m.session(), "41", "42", {0.05, 3, 2}, out, err), kExitRegressed);
  EXPECT_THAT(out.str(), HasSubstr("flag device_suspect:candidate\n"));
  EXPECT_THAT(out.str(), HasSubstr("before its canaries quarantined it"));
  EXPECT_THAT(out.str(), HasSubstr("  npuperf confirm 41 42   # add/p1\n"));
}

TEST(CompareTest, ExitCodeOfTwoRoundsFollowsTheirVerdict) {
  const std::pair<v1::Verdict, int> cases[] = {
      {v1::VERDICT_IMPROVED, kExitOk},
      {v1::VERDICT_STABLE, kExitOk},
      {v1::VERDICT_REGRESSED, kExitRegressed},
      {v1::VERDICT_INSUFFICIENT, kExitNoVerdict},
      {v1::VERDICT_NOT_COMPARABLE, kExitNoVerdict},
      {v1::VERDICT_ERRORED, kExitNoVerdict},
  };
  for (const auto& [verdict, code] : cases) {
    MockSession m;
    EXPECT_CALL(m.queries(), CompareRounds(_, _, _)).WillOnce(Reply(RoundsReply(verdict)));
    std::ostringstream out, err;
    EXPECT_EQ(RunCompare(m.session(), "41", "42", {}, out, err), code) << v1::Verdict_Name(verdict);
  }
}

TEST(CompareTest, TwoRoundsAsJsonAreWrappedInTheVersionedEnvelope) {
  MockSession m(JsonConfig());
  EXPECT_CALL(m.queries(), CompareRounds(_, _, _))
      .WillOnce(Reply(RoundsReply(v1::VERDICT_INSUFFICIENT)));
  std::ostringstream out, err;
  ASSERT_EQ(RunCompare(m.session(), "41", "42", {}, out, err), kExitNoVerdict);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "npuperf.compare.v1");
  EXPECT_EQ(j["kind"], "rounds");
  ASSERT_TRUE(j["exit_code"].is_number_integer());
  EXPECT_EQ(j["exit_code"], kExitNoVerdict);
  EXPECT_EQ(j["summary"],
            "0 regressed, 0 improved, 0 stable / 0 comparable of 1 matched (1 insufficient, 0 not "
            "comparable, 0 errored, 0 unmatched)");
  ASSERT_TRUE(j["result"].is_object());
  const auto& c = j["result"]["comparison"];
  EXPECT_EQ(c["verdict"], "VERDICT_INSUFFICIENT");
  EXPECT_EQ(c["baseline_round_id"], "41");
  EXPECT_EQ(c["duration"]["ratio"], 1.08);
  ASSERT_TRUE(c["metric_deltas"].is_array());
  EXPECT_EQ(c["metric_deltas"].size(), 2u);
  EXPECT_TRUE(c["flags"].is_array());
}

v1::CompareCollectionsResponse CollectionsReply() {
  auto r = Proto<v1::CompareCollectionsResponse>(R"pb(
    counts { matched: 2 comparable: 2 regressed: 1 stable: 1 unmatched: 1 }
    unmatched: "mul/p9"
    geomean_ratio: 1.039)pb");
  *r.add_comparisons() = Regressed();
  auto* stable = r.add_comparisons();
  *stable = Proto<v1::RoundComparison>(R"pb(
    operator_name: "mul"
    verdict: VERDICT_STABLE
    rule: "duration: within 2%"
    duration { baseline_us: 20 candidate_us: 20 ratio: 1 p_value: 0.5 })pb");
  return r;
}

TEST(CompareTest, TwoCollectionsPrintTheVerdictTable) {
  MockSession m;
  auto req = Proto<v1::CompareCollectionsRequest>(R"pb(baseline_collection_id: "c-1"
                                                       candidate_collection_id: "c-2"
                                                       options {})pb");
  EXPECT_CALL(m.queries(), CompareCollections(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                                              EqualsProto(req), _))
      .WillOnce(Reply(CollectionsReply()));
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(m.session(), "c-1", "c-2", {}, out, err), kExitRegressed);
  EXPECT_EQ(out.str(),
            "baseline c-1 -> candidate c-2\n"
            "operator/case                      verdict             base_us     cand_us  "
            "ratio [CI]               p         rule / flags\n"
            "add/p1                             REGRESSED            12.500      13.500  "
            "1.080 [1.050, 1.110]     0.001     duration: slower by 8.0%, p < alpha  "
            "{bound_route_changed:MTE2_BOUND->VEC_BOUND}\n"
            "mul                                STABLE               20.000      20.000  "
            "1.000                    0.5       duration: within 2%\n"
            "unmatched mul/p9\n"
            "1 regressed, 0 improved, 1 stable / 2 comparable of 2 matched (0 insufficient, 0 not "
            "comparable, 0 errored, 1 unmatched)\n"
            "geomean duration ratio 1.039 over 2 comparable cases (below 1 is faster)\n");
}

TEST(CompareTest, TwoCollectionsAsJson) {
  MockSession m(JsonConfig());
  EXPECT_CALL(m.queries(), CompareCollections(_, _, _)).WillOnce(Reply(CollectionsReply()));
  std::ostringstream out, err;
  ASSERT_EQ(RunCompare(m.session(), "c-1", "c-2", {}, out, err), kExitRegressed);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "npuperf.compare.v1");
  EXPECT_EQ(j["kind"], "collections");
  EXPECT_EQ(j["exit_code"], kExitRegressed);
  ASSERT_TRUE(j["summary"].is_string());
  const auto& r = j["result"];
  ASSERT_TRUE(r["comparisons"].is_array());
  EXPECT_EQ(r["comparisons"].size(), 2u);
  EXPECT_EQ(r["comparisons"][1]["verdict"], "VERDICT_STABLE");
  EXPECT_EQ(r["counts"]["unmatched"], 1);
  EXPECT_EQ(r["unmatched"][0], "mul/p9");
  EXPECT_EQ(r["geomean_ratio"], 1.039);
}

TEST(CompareTest, NothingComparableIsNoVerdict) {
  MockSession m;
  EXPECT_CALL(m.queries(), CompareCollections(_, _, _))
      .WillOnce(Reply(Proto<v1::CompareCollectionsResponse>(R"pb(counts { unmatched: 3 })pb")));
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(m.session(), "c-1", "c-2", {}, out, err), kExitNoVerdict);
}

TEST(CompareTest, SeveralCandidatesAreOneCompareManyCallWithTheExitCodeOfAll) {
  MockSession m;
  auto req = Proto<v1::CompareManyRequest>(R"pb(baseline_collection_id: "c-1"
                                                candidate_collection_ids: "c-2"
                                                candidate_collection_ids: "c-3"
                                                options {})pb");
  v1::CompareManyResponse reply;
  auto* stable = reply.add_candidates();
  stable->set_candidate_collection_id("c-2");
  *stable->mutable_comparison() =
      Proto<v1::CompareCollectionsResponse>(R"pb(counts { matched: 1 comparable: 1 stable: 1 })pb");
  auto* slow = reply.add_candidates();
  slow->set_candidate_collection_id("c-3");
  *slow->mutable_comparison() = CollectionsReply();
  *reply.mutable_counts() = Proto<v1::ComparisonCounts>(
      R"pb(matched: 3 comparable: 3 regressed: 1 stable: 2 unmatched: 1)pb");
  EXPECT_CALL(m.queries(),
              CompareMany(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)), EqualsProto(req), _))
      .WillOnce(Reply(reply));
  std::ostringstream out, err;
  EXPECT_EQ(RunCompareMany(m.session(), "c-1", {"c-2", "c-3"}, {}, out, err), kExitRegressed);
  const std::string text = out.str();
  EXPECT_NE(text.find("baseline c-1 -> candidate c-2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("baseline c-1 -> candidate c-3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("all candidates: 1 regressed, 0 improved, 2 stable / 3 comparable of 3 "
                      "matched (0 insufficient, 0 not comparable, 0 errored, 1 unmatched) over 2 "
                      "candidates\n"),
            std::string::npos)
      << text;
}

TEST(CompareTest, SeveralCandidatesAsJsonAndOneCandidateIsAPlainCompare) {
  MockSession m(JsonConfig());
  v1::CompareManyResponse reply;
  reply.add_candidates()->set_candidate_collection_id("c-2");
  reply.add_candidates()->set_candidate_collection_id("c-3");
  *reply.mutable_counts() =
      Proto<v1::ComparisonCounts>(R"pb(matched: 2 comparable: 2 stable: 2)pb");
  EXPECT_CALL(m.queries(), CompareMany(_, _, _)).WillOnce(Reply(reply));
  EXPECT_CALL(m.queries(), CompareCollections(_, _, _)).WillOnce(Reply(CollectionsReply()));
  std::ostringstream out, err;
  ASSERT_EQ(RunCompareMany(m.session(), "c-1", {"c-2", "c-3"}, {}, out, err), kExitOk);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["kind"], "many");
  EXPECT_EQ(j["result"]["candidates"].size(), 2u);
  EXPECT_EQ(j["result"]["candidates"][1]["candidate_collection_id"], "c-3");
  std::ostringstream one;
  EXPECT_EQ(RunCompareMany(m.session(), "c-1", {"c-2"}, {}, one, err), kExitRegressed);
  EXPECT_EQ(nlohmann::json::parse(one.str())["kind"], "collections");
}

TEST(CompareTest, SeveralCandidatesMustBeCollections) {
  MockSession m;  // no call
  std::ostringstream out, err;
  EXPECT_EQ(RunCompareMany(m.session(), "41", {"42", "43"}, {}, out, err), kExitUsage);
  EXPECT_EQ(RunCompareMany(m.session(), "c-1", {"c-2", "43"}, {}, out, err), kExitUsage);
  EXPECT_NE(err.str().find("several candidates need collection ids"), std::string::npos)
      << err.str();
}

TEST(CompareTest, ARoundAgainstACollectionIsAUsageError) {
  MockSession m;  // no call
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(m.session(), "41", "c-2", {}, out, err), kExitUsage);
  EXPECT_EQ(RunCompare(m.session(), "0", "42", {}, out, err), kExitUsage);  // 0 is no round id
  EXPECT_EQ(err.str(),
            "npuperf compare: give two round ids or two collection ids\n"
            "npuperf compare: give two round ids or two collection ids\n");
}

TEST(CompareTest, ServerErrorsExitOneAndNotFoundSix) {
  MockSession m;
  EXPECT_CALL(m.queries(), CompareRounds(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::NOT_FOUND, "round 42 not found")));
  EXPECT_CALL(m.queries(), CompareCollections(_, _, _))
      .WillOnce(Return(
          ToGrpcStatus(InvalidArgumentWithFields({{"options.alpha", "must be in (0, 0.5]"}}))));
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(m.session(), "41", "42", {}, out, err), kExitNotFound);
  EXPECT_EQ(RunCompare(m.session(), "c-1", "c-2", {0.9, 0, 0}, out, err), kExitError);
  EXPECT_EQ(err.str(),
            "npuperf: NOT_FOUND: round 42 not found\n"
            "npuperf: INVALID_ARGUMENT: invalid request: options.alpha: must be in (0, 0.5]\n"
            "  options.alpha: must be in (0, 0.5]\n");
  EXPECT_EQ(out.str(), "");
}

// ---- regressions ----------------------------------------------------------

TEST(RegressionsTest, SinceIsADurationBackFromTheClock) {
  MockSession m;
  v1::ListRegressionsRequest sent;
  EXPECT_CALL(m.queries(), ListRegressions(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)), _, _))
      .WillOnce(::testing::DoAll(::testing::SaveArg<1>(&sent),
                                 Reply(Proto<v1::ListRegressionsResponse>(R"pb(
                                   compared: 2
                                   baseline_description: "the newest earlier rounds"
                                   counts { matched: 2 comparable: 2 stable: 2 })pb"))));
  RegressionsArgs a;
  a.since = "24h";
  a.operator_name = "add";
  a.collection = "c-2";
  std::ostringstream out, err;
  EXPECT_EQ(RunRegressions(m.session(), a, out, err), kExitOk);
  const int64_t now_ms = ToUnixMillis(m.clock().SystemNow());
  auto want = Proto<v1::ListRegressionsRequest>(R"pb(operator_name: "add"
                                                     candidate_collection_id: "c-2"
                                                     options {})pb");
  want.mutable_since()->set_seconds((now_ms - 24 * 3'600'000) / 1000);
  EXPECT_THAT(sent, EqualsProto(want));
  EXPECT_EQ(
      out.str(),
      "0 regressed / 2 comparable against the newest earlier rounds (0 regressed, 0 improved, "
      "2 stable / 2 comparable of 2 matched (0 insufficient, 0 not comparable, 0 errored, 0 "
      "unmatched))\n");
}

v1::ListRegressionsResponse DriftReply(bool began_in_window) {
  auto r = Proto<v1::ListRegressionsResponse>(R"pb(
    compared: 1
    baseline_description: "newest rounds before 2027-01-14T08:00:00Z"
    counts { matched: 1 comparable: 1 stable: 1 }
    drifts {
      operator_name: "add"
      case_id: "p1"
      began_round_id: 57
      began_at { seconds: 1800000000 }
      before_us: 100
      after_us: 106.5
      change_pct: 6.5
      p_value: 0.005
      rounds_since: 6
    })pb");
  r.mutable_drifts(0)->set_began_in_window(began_in_window);
  return r;
}

TEST(RegressionsTest, ANewDriftIsPrintedAndExitsThreeAnOldOneIsPrintedOnly) {
  MockSession m;
  EXPECT_CALL(m.queries(), ListRegressions(_, _, _))
      .WillOnce(Reply(DriftReply(true)))
      .WillOnce(Reply(DriftReply(false)))
      .WillOnce(Reply(DriftReply(true)));
  RegressionsArgs a;
  a.since = "24h";
  std::ostringstream out, err;
  EXPECT_EQ(RunRegressions(m.session(), a, out, err), kExitRegressed);
  EXPECT_NE(out.str().find("drift add/p1: 100.000 -> 106.500 us (+6.5 %) since round 57 "
                           "(2027-01-15T08:00:00Z), 6 rounds, p=0.005 NEW\n"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("; 1 drifted (1 new)\n"), std::string::npos) << out.str();
  std::ostringstream old;
  EXPECT_EQ(RunRegressions(m.session(), a, old, err), kExitOk);
  EXPECT_NE(old.str().find("(began before the window)"), std::string::npos) << old.str();
  a.verdict.fail_on = FailOn::kNever;
  std::ostringstream never;
  EXPECT_EQ(RunRegressions(m.session(), a, never, err), kExitOk);
}

TEST(RegressionsTest, AgainstAPinnedBaselinePrintsTheRegressedRowsAndExitsThree) {
  MockSession m;
  auto reply = Proto<v1::ListRegressionsResponse>(R"pb(
    compared: 3
    baseline_description: "baseline branch=main"
    counts { matched: 3 comparable: 3 regressed: 1 stable: 2 })pb");
  *reply.add_regressions() = Regressed();
  EXPECT_CALL(
      m.queries(),
      ListRegressions(
          _, EqualsProto(Proto<v1::ListRegressionsRequest>(R"pb(baseline_label: "branch=main"
                                                                options {})pb")),
          _))
      .WillOnce(Reply(reply));
  RegressionsArgs a;
  a.baseline_label = "branch=main";
  std::ostringstream out, err;
  EXPECT_EQ(RunRegressions(m.session(), a, out, err), kExitRegressed);
  EXPECT_THAT(out.str(), ::testing::StartsWith("operator/case                      verdict"));
  EXPECT_THAT(out.str(), ::testing::HasSubstr("\nadd/p1                             REGRESSED  "));
  EXPECT_THAT(out.str(),
              ::testing::EndsWith("\n1 regressed / 3 comparable against baseline branch=main (1 "
                                  "regressed, 0 improved, 2 stable / 3 comparable of 3 matched (0 "
                                  "insufficient, 0 not comparable, 0 errored, 0 unmatched))\n"));
}

TEST(RegressionsTest, JsonEnvelope) {
  MockSession m(JsonConfig());
  auto reply = Proto<v1::ListRegressionsResponse>(R"pb(
    compared: 1
    counts { matched: 2 comparable: 1 stable: 1 errored: 1 })pb");
  EXPECT_CALL(m.queries(), ListRegressions(_, _, _)).WillOnce(Reply(reply));
  RegressionsArgs a;
  a.baseline_label = "branch=main";
  std::ostringstream out, err;
  ASSERT_EQ(RunRegressions(m.session(), a, out, err), kExitNoVerdict);  // errored: never a pass
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "npuperf.regressions.v1");
  EXPECT_EQ(j["kind"], "regressions");
  EXPECT_EQ(j["exit_code"], kExitNoVerdict);
  EXPECT_THAT(j["summary"].get<std::string>(), ::testing::StartsWith("0 regressed / 1 comparable"));
  EXPECT_TRUE(j["result"]["regressions"].is_array());
  EXPECT_EQ(j["result"]["compared"], 1);
}

TEST(RegressionsTest, UsageErrorsMakeNoCall) {
  MockSession m;
  std::ostringstream out, err;
  EXPECT_EQ(RunRegressions(m.session(), RegressionsArgs(), out, err), kExitUsage);
  RegressionsArgs bad;
  bad.since = "yesterday";
  EXPECT_EQ(RunRegressions(m.session(), bad, out, err), kExitUsage);
  EXPECT_EQ(err.str(),
            "npuperf regressions: give --baseline LABEL or --since TIME\n"
            "npuperf regressions: --since 'yesterday': want an RFC 3339 time or <n>s|m|h|d\n");
}

// ---- baseline pin ---------------------------------------------------------

TEST(BaselinePinTest, DigitsPinARoundAnythingElseACollection) {
  MockSession m;
  ::testing::InSequence in_order;
  EXPECT_CALL(m.queries(),
              PinBaseline(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                          EqualsProto(Proto<v1::PinBaselineRequest>(R"pb(label: "branch=main"
                                                                         round_id: 42)pb")),
                          _))
      .WillOnce(Reply(Proto<v1::PinBaselineResponse>(R"pb(label: "branch=main" round_id: 42)pb")));
  EXPECT_CALL(
      m.queries(),
      PinBaseline(_, EqualsProto(Proto<v1::PinBaselineRequest>(R"pb(label: "branch=main"
                                                                    collection_id: "c-1")pb")),
                  _))
      .WillOnce(Reply(
          Proto<v1::PinBaselineResponse>(R"pb(label: "branch=main" collection_id: "c-1")pb")));
  std::ostringstream out, err;
  EXPECT_EQ(RunBaselinePin(m.session(), "branch=main", "42", out, err), kExitOk);
  EXPECT_EQ(RunBaselinePin(m.session(), "branch=main", "c-1", out, err), kExitOk);
  EXPECT_EQ(out.str(),
            "baseline branch=main = round 42\n"
            "baseline branch=main = collection c-1\n");
}

TEST(BaselinePinTest, JsonAndErrors) {
  MockSession m(JsonConfig());
  ::testing::InSequence in_order;
  EXPECT_CALL(m.queries(), PinBaseline(_, _, _))
      .WillOnce(Reply(Proto<v1::PinBaselineResponse>(R"pb(label: "branch=main" round_id: 42)pb")));
  EXPECT_CALL(m.queries(), PinBaseline(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAVAILABLE, "no server")));
  std::ostringstream out, err;
  ASSERT_EQ(RunBaselinePin(m.session(), "branch=main", "42", out, err), kExitOk);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["label"], "branch=main");
  EXPECT_EQ(j["round_id"], "42");
  EXPECT_EQ(j["collection_id"], "");
  out.str("");
  EXPECT_EQ(RunBaselinePin(m.session(), "branch=main", "42", out, err), kExitUnavailable);
  EXPECT_EQ(err.str(), "npuperf: UNAVAILABLE: no server\n");
  EXPECT_EQ(nlohmann::json::parse(out.str())["error"]["code"], "UNAVAILABLE");
}

}  // namespace
}  // namespace npuperf::client
