// client/report_commands.cc against StrictMock stubs: `report --style html`
// of a round and of a collection (its operators' rounds for the
// sparklines), `compare --format html`, and `history` in text, HTML and
// JSON with the calls each makes. The pages' content is report/'s
// (tests/report); here: which calls, which page, which exit code.
#include <sstream>

#include "client/compare_commands.h"
#include "client/report_commands.h"
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

bool Has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

v1::Round RoundOf(int64_t id, const std::string& case_id, double us) {
  v1::Round r;
  r.set_id(id);
  r.set_operator_name("add");
  r.set_case_id(case_id);
  r.mutable_evidence()->mutable_duration()->set_aggregate_us(us);
  r.mutable_evidence()->mutable_bound()->set_label("VEC_BOUND");
  return r;
}

v1::ListRoundsResponse RoundsOf(std::vector<v1::Round> rounds) {
  v1::ListRoundsResponse resp;
  for (auto& r : rounds) *resp.add_rounds() = r;
  return resp;
}

TEST(ReportHtmlTest, ARoundIsOnePage) {
  MockSession m;
  v1::GetRoundResponse resp;
  *resp.mutable_round() = RoundOf(42, "c1", 12.5);
  EXPECT_CALL(m.queries(), GetRound(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                                    EqualsProto(Proto<v1::GetRoundRequest>("round_id: 42")), _))
      .WillOnce(Reply(resp));
  std::ostringstream out, err;
  ASSERT_EQ(RunReport(m.session(), "42", ReportStyle::kHtml, out, err), kExitOk) << err.str();
  EXPECT_EQ(out.str().rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(Has(out.str(), "data-page=\"round\""));
  EXPECT_TRUE(Has(out.str(), "round 42: add/c1"));
}

TEST(ReportHtmlTest, ACollectionReadsItsOperatorsRoundsForTheSparklines) {
  MockSession m;
  v1::GetCollectionResponse col;
  *col.mutable_collection() = Proto<v1::Collection>(R"(
      id: "c-9" counts { total: 1 succeeded: 1 }
      jobs { operator_name: "add" case_id: "c1" state: JOB_STATE_SUCCEEDED round_id: 3 })");
  EXPECT_CALL(m.collections(), GetCollection(_, _, _)).WillOnce(Reply(col));
  v1::ListRoundsResponse page1 = RoundsOf({RoundOf(1, "c1", 10), RoundOf(2, "c1", 11)});
  page1.set_next_page_token("2");
  EXPECT_CALL(
      m.queries(),
      ListRounds(
          _, EqualsProto(Proto<v1::ListRoundsRequest>(R"(operator_name: "add" page_size: 1000)")),
          _))
      .WillOnce(Reply(page1));
  EXPECT_CALL(m.queries(),
              ListRounds(_,
                         EqualsProto(Proto<v1::ListRoundsRequest>(
                             R"(operator_name: "add" page_size: 1000 page_token: "2")")),
                         _))
      .WillOnce(Reply(RoundsOf({RoundOf(3, "c1", 9)})));
  std::ostringstream out, err;
  ASSERT_EQ(RunReport(m.session(), "c-9", ReportStyle::kHtml, out, err), kExitOk) << err.str();
  EXPECT_TRUE(Has(out.str(), "data-page=\"collection\""));
  EXPECT_TRUE(Has(out.str(), "data-points=\"3\""));
}

TEST(ReportHtmlTest, AFailedCallIsAnErrorNotAPage) {
  MockSession m;
  EXPECT_CALL(m.queries(), GetRound(_, _, _))
      .WillOnce(Reply(v1::GetRoundResponse(), grpc::Status(grpc::NOT_FOUND, "no round 7")));
  std::ostringstream out, err;
  EXPECT_EQ(RunReport(m.session(), "7", ReportStyle::kHtml, out, err), kExitNotFound);
  EXPECT_EQ(out.str(), "");
  EXPECT_THAT(err.str(), HasSubstr("no round 7"));
}

TEST(ReportHtmlTest, CompareFormatHtmlIsTheComparisonPageWithTheSameExitCode) {
  MockSession m;
  v1::CompareRoundsResponse resp;
  *resp.mutable_comparison() = Proto<v1::RoundComparison>(R"(
      baseline_round_id: 1 candidate_round_id: 2 operator_name: "add" case_id: "c1"
      verdict: VERDICT_REGRESSED duration { ratio: 1.1 ratio_ci_low: 1.05 ratio_ci_high: 1.2 })");
  EXPECT_CALL(m.queries(), CompareRounds(_, _, _)).WillOnce(Reply(resp));
  VerdictArgs v;
  v.format = VerdictFormat::kHtml;
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(m.session(), "1", "2", v, out, err), kExitRegressed);
  EXPECT_TRUE(Has(out.str(), "data-page=\"comparison\""));
  EXPECT_TRUE(Has(out.str(), "class=\"verdict v-regressed\""));
  EXPECT_TRUE(Has(out.str(), "npuperf compare 1 2"));
}

// History: rounds 1..3 of case c1, baseline round 1: rounds 2 and 3 are
// compared with it, round 1 is the baseline itself.
void ExpectHistoryCalls(MockSession& m) {
  EXPECT_CALL(m.queries(), ListRounds(_,
                                      EqualsProto(Proto<v1::ListRoundsRequest>(
                                          R"(operator_name: "add" case_id: "c1" page_size: 1000)")),
                                      _))
      .WillOnce(Reply(RoundsOf({RoundOf(3, "c1", 13), RoundOf(1, "c1", 10), RoundOf(2, "c1", 9)})));
  v1::GetRoundResponse base;
  *base.mutable_round() = RoundOf(1, "c1", 10);
  EXPECT_CALL(m.queries(), GetRound(_, EqualsProto(Proto<v1::GetRoundRequest>("round_id: 1")), _))
      .WillOnce(Reply(base));
  for (int64_t cand : {2, 3}) {
    v1::CompareRoundsResponse resp;
    resp.mutable_comparison()->set_baseline_round_id(1);
    resp.mutable_comparison()->set_candidate_round_id(cand);
    resp.mutable_comparison()->set_verdict(cand == 2 ? v1::VERDICT_IMPROVED
                                                     : v1::VERDICT_REGRESSED);
    v1::CompareRoundsRequest req;
    req.set_baseline_round_id(1);
    req.set_candidate_round_id(cand);
    EXPECT_CALL(m.queries(),
                CompareRounds(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)), EqualsProto(req), _))
        .WillOnce(Reply(resp));
  }
}

TEST(HistoryTest, VerdictsAgainstTheBaselineInTextHtmlAndJson) {
  HistoryArgs a;
  a.operator_name = "add";
  a.case_id = "c1";
  a.baseline = "1";
  {
    MockSession m;
    ExpectHistoryCalls(m);
    std::ostringstream out, err;
    ASSERT_EQ(RunHistory(m.session(), a, out, err), kExitOk) << err.str();
    EXPECT_THAT(out.str(), HasSubstr("add/c1\n"));
    EXPECT_THAT(out.str(), HasSubstr("baseline"));
    EXPECT_THAT(out.str(), HasSubstr("IMPROVED"));
    EXPECT_THAT(out.str(), HasSubstr("REGRESSED"));
    EXPECT_LT(out.str().find("IMPROVED"), out.str().find("REGRESSED"));  // id order
  }
  {
    MockSession m;
    ExpectHistoryCalls(m);
    a.style = "html";
    std::ostringstream out, err;
    ASSERT_EQ(RunHistory(m.session(), a, out, err), kExitOk) << err.str();
    EXPECT_TRUE(Has(out.str(), "data-page=\"history\""));
    EXPECT_TRUE(Has(out.str(), "class=\"mark pinned\""));
    EXPECT_TRUE(Has(out.str(), "class=\"mark v-regressed\""));
  }
  {
    MockSession m(JsonConfig());
    ExpectHistoryCalls(m);
    std::ostringstream out, err;
    ASSERT_EQ(RunHistory(m.session(), a, out, err), kExitOk) << err.str();
    const auto j = nlohmann::json::parse(out.str());
    EXPECT_EQ(j["schema"], "npuperf.history.v1");
    EXPECT_EQ(j["rounds"].size(), 3u);
    EXPECT_EQ(j["verdicts"].size(), 2u);
  }
}

TEST(HistoryTest, WithoutABaselineEachRoundIsComparedWithItsPredecessorInTheWindow) {
  MockSession m;
  EXPECT_CALL(m.queries(), ListRounds(_, _, _))
      .WillOnce(Reply(RoundsOf({RoundOf(1, "c1", 10), RoundOf(2, "c1", 9), RoundOf(3, "c1", 13)})));
  // --last 2 keeps rounds 2 and 3; round 2 is still compared with round 1.
  for (auto [base, cand] : {std::pair<int64_t, int64_t>{1, 2}, {2, 3}}) {
    v1::CompareRoundsRequest req;
    req.set_baseline_round_id(base);
    req.set_candidate_round_id(cand);
    EXPECT_CALL(m.queries(), CompareRounds(_, EqualsProto(req), _))
        .WillOnce(Reply(v1::CompareRoundsResponse()));
  }
  HistoryArgs a;
  a.operator_name = "add";
  a.last = 2;
  std::ostringstream out, err;
  ASSERT_EQ(RunHistory(m.session(), a, out, err), kExitOk) << err.str();
  EXPECT_FALSE(Has(out.str(), "\n  1 "));
}

TEST(HistoryTest, BadArgumentsAreUsageErrorsNamingTheFlag) {
  MockSession m;
  HistoryArgs a;
  a.operator_name = "add";
  a.last = 0;
  std::ostringstream out, err;
  EXPECT_EQ(RunHistory(m.session(), a, out, err), kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("--last"));

  MockSession other;
  EXPECT_CALL(other.queries(), ListRounds(_, _, _))
      .WillOnce(Reply(RoundsOf({RoundOf(5, "c1", 1)})));
  v1::GetRoundResponse base;
  *base.mutable_round() = RoundOf(1, "c1", 10);
  base.mutable_round()->set_operator_name("mul");
  EXPECT_CALL(other.queries(), GetRound(_, _, _)).WillOnce(Reply(base));
  a.last = 20;
  a.baseline = "1";
  std::ostringstream out2, err2;
  EXPECT_EQ(RunHistory(other.session(), a, out2, err2), kExitError);
  EXPECT_THAT(err2.str(), HasSubstr("--baseline: round 1 is of operator 'mul'"));
}

}  // namespace
}  // namespace npuperf::client
