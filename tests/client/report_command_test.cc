// client/compare_commands.cc against StrictMock stubs, the report command: a
// round's rendered summary in the chosen style, a collection's table of rounds
// with the golden geomean (text, markdown, JSON), and the errors of each call.
#include <sstream>

#include "client/compare_commands.h"
#include "nlohmann/json.hpp"
#include "tests/client/mock_session.h"

namespace npuperf::client {
namespace {

using ::npuperf::testing::EqualsProto;
using ::npuperf::testing::HasDeadline;
using ::npuperf::testing::kDefaultCallTimeout;
using ::npuperf::testing::MockSession;
using ::npuperf::testing::Proto;
using ::npuperf::testing::Reply;
using ::testing::_;
using ::testing::Return;

v1::GetRoundResponse RoundWithSummaries(const char* json) {
  auto r = Proto<v1::GetRoundResponse>(
      R"pb(round {
             id: 42
             operator_name: "add"
             evidence { summary_text: "== summary.txt ==" summary_markdown: "# Evidence" }
           })pb");
  r.mutable_round()->mutable_evidence()->set_evidence_json(json);
  return r;
}

TEST(ReportTest, ARoundPrintsItsRenderedSummaryInTheChosenStyle) {
  const std::pair<ReportStyle, std::string> cases[] = {
      {ReportStyle::kText, "== summary.txt ==\n"},
      {ReportStyle::kMarkdown, "# Evidence\n"},
      {ReportStyle::kJson, "{\"op_name\": \"add_kernel\"}"},  // evidence.json verbatim
  };
  for (const auto& [style, want] : cases) {
    MockSession m;
    EXPECT_CALL(m.queries(), GetRound(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                                      EqualsProto(Proto<v1::GetRoundRequest>("round_id: 42")), _))
        .WillOnce(Reply(RoundWithSummaries("{\"op_name\": \"add_kernel\"}")));
    std::ostringstream out, err;
    EXPECT_EQ(RunReport(m.session(), "42", style, out, err), kExitOk);
    EXPECT_EQ(out.str(), want);
  }
}

TEST(ReportTest, ARoundWithoutEvidenceJsonPrintsTheRoundAsJson) {
  MockSession m;
  EXPECT_CALL(m.queries(), GetRound(_, _, _)).WillOnce(Reply(RoundWithSummaries("")));
  std::ostringstream out, err;
  ASSERT_EQ(RunReport(m.session(), "42", ReportStyle::kJson, out, err), kExitOk);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["id"], "42");
  EXPECT_EQ(j["operator_name"], "add");
  EXPECT_EQ(j["evidence"]["summary_markdown"], "# Evidence");
}

TEST(ReportTest, ARoundWithoutARenderedSummaryIsAnError) {
  MockSession m;
  EXPECT_CALL(m.queries(), GetRound(_, _, _))
      .WillOnce(Reply(Proto<v1::GetRoundResponse>("round { id: 42 }")));
  std::ostringstream out, err;
  EXPECT_EQ(RunReport(m.session(), "42", ReportStyle::kText, out, err), kExitError);
  EXPECT_EQ(err.str(), "npuperf report: round 42 carries no rendered summary\n");
}

v1::ListRoundsResponse CollectionRounds() {
  return Proto<v1::ListRoundsResponse>(R"pb(rounds {
                                              id: 42
                                              operator_name: "add"
                                              case_id: "p1"
                                              evidence {
                                                duration {
                                                  aggregate_us: 12.5
                                                  samples_us: [ 12.4, 12.6 ]
                                                }
                                                fingerprint { soc: "Ascend910B2" }
                                                bound { label: "MTE2_BOUND" }
                                                per_core { verdict: "PASS" spread_pct: 3.25 }
                                                dvfs { status: "ok" }
                                                golden { status: "joined" ratio: 1.25 }
                                              }
                                            })pb");
}

v1::GetGoldenReportResponse Golden() {
  return Proto<v1::GetGoldenReportResponse>(R"pb(
    cases { operator_name: "add" case_id: "p1" round_id: 42 }
    geomean_ratio: 1.25
    label: "golden_reference_ratio (cross-scope reference, not a speed-up)")pb");
}

// Both calls of a collection report, each with its own deadline.
void ExpectCollectionReport(MockSession& m) {
  ::testing::InSequence in_order;
  EXPECT_CALL(m.queries(),
              ListRounds(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                         EqualsProto(Proto<v1::ListRoundsRequest>(R"pb(collection_id: "c-1"
                                                                       page_size: 1000)pb")),
                         _))
      .WillOnce(Reply(CollectionRounds()));
  EXPECT_CALL(m.queries(),
              GetGoldenReport(
                  HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                  EqualsProto(Proto<v1::GetGoldenReportRequest>(R"pb(collection_id: "c-1")pb")), _))
      .WillOnce(Reply(Golden()));
}

TEST(ReportTest, ACollectionIsATableOfItsRoundsAndTheGoldenGeomean) {
  MockSession m;
  ExpectCollectionReport(m);
  std::ostringstream out, err;
  EXPECT_EQ(RunReport(m.session(), "c-1", ReportStyle::kText, out, err), kExitOk);
  EXPECT_EQ(out.str(),
            "collection c-1\n"
            "round  operator/case                      soc                kernel_us samples bound  "
            "      per-core         dvfs     golden_ratio\n"
            "42     add/p1                             Ascend910B2           12.500       2 "
            "MTE2_BOUND   PASS (3.2%)      ok       1.250\n"
            "golden reference ratio geomean 1.250 over 1 cases — golden_reference_ratio "
            "(cross-scope reference, not a speed-up)\n");
}

TEST(ReportTest, ACollectionAsMarkdown) {
  MockSession m;
  ExpectCollectionReport(m);
  std::ostringstream out, err;
  EXPECT_EQ(RunReport(m.session(), "c-1", ReportStyle::kMarkdown, out, err), kExitOk);
  EXPECT_EQ(out.str(),
            "## Collection c-1\n\n"
            "| round | operator/case | soc | kernel_us | samples | bound | per-core | dvfs | "
            "golden_ratio |\n"
            "|---|---|---|---|---|---|---|---|---|\n"
            "| 42 | add/p1 | Ascend910B2 | 12.500 | 2 | MTE2_BOUND | PASS (3.2%) | ok | 1.250 |\n"
            "\ngolden reference ratio geomean 1.250 over 1 cases — golden_reference_ratio "
            "(cross-scope reference, not a speed-up)\n");
}

TEST(ReportTest, ACollectionAsJsonHoldsRoundsAndGolden) {
  MockSession m;
  ExpectCollectionReport(m);
  std::ostringstream out, err;
  ASSERT_EQ(RunReport(m.session(), "c-1", ReportStyle::kJson, out, err), kExitOk);
  const auto j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j["rounds"]["rounds"].is_array());
  EXPECT_EQ(j["rounds"]["rounds"][0]["id"], "42");
  ASSERT_TRUE(j["golden"]["cases"].is_array());
  EXPECT_EQ(j["golden"]["geomean_ratio"], 1.25);
}

TEST(ReportTest, AFailedListStopsBeforeTheGoldenReport) {
  MockSession m;
  EXPECT_CALL(m.queries(), ListRounds(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::NOT_FOUND, "collection c-1 not found")));
  std::ostringstream out, err;
  EXPECT_EQ(RunReport(m.session(), "c-1", ReportStyle::kText, out, err), kExitNotFound);
  EXPECT_EQ(err.str(), "npuperf: NOT_FOUND: collection c-1 not found\n");
  EXPECT_EQ(out.str(), "");
}

TEST(ReportTest, AFailedGoldenReportIsAnError) {
  MockSession m;
  EXPECT_CALL(m.queries(), ListRounds(_, _, _)).WillOnce(Reply(CollectionRounds()));
  EXPECT_CALL(m.queries(), GetGoldenReport(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAVAILABLE, "server draining")));
  std::ostringstream out, err;
  EXPECT_EQ(RunReport(m.session(), "c-1", ReportStyle::kText, out, err), kExitUnavailable);
  EXPECT_EQ(err.str(), "npuperf: UNAVAILABLE: server draining\n");
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace npuperf::client
