// client/impl_commands.cc and impl_format.cc against StrictMock stubs: compare-impl in every
// format with the bot contract's exit codes, the pairs and pair map it sends, its usage errors;
// release-report's groups, pass rates and implementation table; the pure parsers.
#include "client/impl_commands.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "client/impl_format.h"
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

// Two operators: rms (2 scenarios, 0.54 / 0.46, both faster) and rope (one
// scenario slower, one shape mismatch), and an unpaired base operator.
v1::CompareImplementationsResponse ImplReply() {
  return Proto<v1::CompareImplementationsResponse>(R"pb(
    base_collection_id: "c-asc"
    candidate_collection_id: "c-pto"
    pairs { candidate_operator: "rms" base_operator: "rms_ascendc" }
    pairs { candidate_operator: "rope" base_operator: "rope_ascendc" }
    cases {
      candidate_operator: "rms"
      base_operator: "rms_ascendc"
      case_id: "p0"
      status: IMPLEMENTATION_CASE_COMPARED
      base_round_id: 1
      candidate_round_id: 11
      core {
        scope: "core"
        base_us: 100
        candidate_us: 54
        ratio: 0.54
        p_value: 1
        verdict: VERDICT_INSUFFICIENT
        rule: "one figure per round"
        base_core: "AIV"
        candidate_core: "AIV"
      }
      task_duration {
        scope: "task_duration"
        base_us: 100
        candidate_us: 46
        ratio: 0.46
        ratio_ci_low: 0.45
        ratio_ci_high: 0.47
        p_value: 0.0079
        verdict: VERDICT_IMPROVED
        rule: "p=0.0079<0.01 and -54.00% faster"
      }
    }
    cases {
      candidate_operator: "rope"
      base_operator: "rope_ascendc"
      case_id: "p0"
      status: IMPLEMENTATION_CASE_COMPARED
      base_round_id: 2
      candidate_round_id: 12
      core { scope: "core" base_us: 10 candidate_us: 12 ratio: 1.2 verdict: VERDICT_INSUFFICIENT }
      task_duration {
        scope: "task_duration"
        base_us: 10
        candidate_us: 13
        ratio: 1.3
        p_value: 0.0079
        verdict: VERDICT_REGRESSED
        rule: "+30.00% slower"
      }
    }
    cases {
      candidate_operator: "rope"
      base_operator: "rope_ascendc"
      case_id: "p1"
      status: IMPLEMENTATION_CASE_SHAPE_MISMATCH
      reason: "shape or dtype differs: case_shape (8x8 vs 16x16)"
    }
    operators {
      candidate_operator: "rms"
      base_operator: "rms_ascendc"
      scenarios: 1
      core_ratio: 0.54
      core_cases: 1
      task_duration_ratio: 0.46
      task_duration_cases: 1
    }
    operators {
      candidate_operator: "rope"
      base_operator: "rope_ascendc"
      scenarios: 1
      not_compared: 1
      core_ratio: 1.2
      core_cases: 1
      task_duration_ratio: 1.3
      task_duration_cases: 1
    }
    unpaired {
      side: "base"
      operator_name: "adam_ascendc"
      reason: "no candidate operator is paired with it"
    }
    arithmetic_mean {
      label: "arithmetic mean of operator ratios (the release report's average)"
      core_ratio: 0.87
      task_duration_ratio: 0.88
      core_operators: 2
      task_duration_operators: 2
    }
    geometric_mean {
      label: "geometric mean of operator ratios"
      core_ratio: 0.805
      task_duration_ratio: 0.773
      core_operators: 2
      task_duration_operators: 2
    }
    counts { matched: 3 comparable: 2 improved: 1 regressed: 1 not_comparable: 1 })pb");
}

CompareImplArgs Args(VerdictFormat format = VerdictFormat::kDefault) {
  CompareImplArgs a;
  a.base = "c-asc";
  a.candidate = "c-pto";
  a.pairs = {"rms=rms_ascendc", " rope = rope_ascendc "};
  a.verdict.format = format;
  return a;
}

// Runs compare-impl against ImplReply; returns the exit code.
int RunWithReply(MockSession& m, const CompareImplArgs& a, std::ostringstream& out) {
  EXPECT_CALL(m.queries(), CompareImplementations(_, _, _)).WillOnce(Reply(ImplReply()));
  std::ostringstream err;
  return RunCompareImpl(m.session(), a, out, err);
}

TEST(CompareImplTest, SendsThePairsAndPrintsBothScopesAsText) {
  MockSession m;
  auto req = Proto<v1::CompareImplementationsRequest>(R"pb(
    base_collection_id: "c-asc"
    candidate_collection_id: "c-pto"
    pairs { candidate_operator: "rms" base_operator: "rms_ascendc" }
    pairs { candidate_operator: "rope" base_operator: "rope_ascendc" }
    options {})pb");
  EXPECT_CALL(m.queries(), CompareImplementations(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                                                  EqualsProto(req), _))
      .WillOnce(Reply(ImplReply()));
  std::ostringstream out, err;
  // rope's Task Duration is significantly slower: exit 3 as compare's REGRESSED.
  EXPECT_EQ(RunCompareImpl(m.session(), Args(), out, err), kExitRegressed) << err.str();
  const std::string text = out.str();
  EXPECT_TRUE(absl::StrContains(text, "candidate c-pto against base c-asc: 2 operator pairs"));
  EXPECT_TRUE(absl::StrContains(text, "0.54     0.46")) << text;
  EXPECT_TRUE(absl::StrContains(text, "arithmetic mean of operator ratios")) << text;
  EXPECT_TRUE(absl::StrContains(text, "0.540 AIV->AIV")) << text;
  EXPECT_TRUE(absl::StrContains(text, "0.460 [0.450, 0.470]")) << text;
  EXPECT_TRUE(absl::StrContains(text,
                                "rope/p1 vs rope_ascendc: SHAPE_MISMATCH: shape or dtype "
                                "differs: case_shape (8x8 vs 16x16)"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "base operator adam_ascendc: UNPAIRED")) << text;
}

TEST(CompareImplTest, ExitCodesFollowTheCountsAndFailOn) {
  MockSession m;
  CompareImplArgs a = Args();
  a.verdict.fail_on = FailOn::kNever;
  std::ostringstream out;
  EXPECT_EQ(RunWithReply(m, a, out), kExitOk);
  v1::CompareImplementationsResponse faster = ImplReply();
  faster.mutable_counts()->set_regressed(0);
  EXPECT_CALL(m.queries(), CompareImplementations(_, _, _)).WillOnce(Reply(faster));
  std::ostringstream err;
  // No regression, but a shape mismatch (not comparable): no verdict.
  EXPECT_EQ(RunCompareImpl(m.session(), Args(), out, err), kExitNoVerdict);
}

TEST(CompareImplTest, JsonIsTheVersionedEnvelope) {
  MockSession m(JsonConfig());
  std::ostringstream out;
  ASSERT_EQ(RunWithReply(m, Args(), out), kExitRegressed);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "npuperf.compare_impl.v1");
  EXPECT_EQ(j["exit_code"], kExitRegressed);
  EXPECT_EQ(j["result"]["operators"][0]["scenarios"], 1);
  EXPECT_EQ(j["result"]["cases"][2]["status"], "IMPLEMENTATION_CASE_SHAPE_MISMATCH");
  EXPECT_EQ(j["result"]["arithmetic_mean"]["core_ratio"], 0.87);
}

TEST(CompareImplTest, MarkdownIsTheReleaseReportTable) {
  MockSession m;
  std::ostringstream out;
  RunWithReply(m, Args(VerdictFormat::kMarkdown), out);
  const std::string md = out.str();
  EXPECT_TRUE(absl::StrContains(md,
                                "| operator | base operator | scenarios | core (swimlane) | "
                                "Task Duration (profiling) |"))
      << md;
  EXPECT_TRUE(absl::StrContains(md, "| rms | rms_ascendc | 1 | 0.54 | 0.46 |")) << md;
  EXPECT_TRUE(absl::StrContains(md, "| geometric mean of operator ratios | - | - | 0.81 | 0.77 |"))
      << md;
  EXPECT_TRUE(absl::StrContains(md, "- rope/p1 vs rope_ascendc: SHAPE_MISMATCH")) << md;
}

TEST(CompareImplTest, HtmlHasTheBarChartOfBothScopes) {
  MockSession m;
  std::ostringstream out;
  RunWithReply(m, Args(VerdictFormat::kHtml), out);
  const std::string html = out.str();
  EXPECT_TRUE(absl::StrContains(html, "data-page=\"implementations\"")) << html;
  EXPECT_TRUE(absl::StrContains(html, "data-chart=\"implementation-ratios\""));
  EXPECT_TRUE(absl::StrContains(html, "data-field=\"rms\" data-scope=\"first\" data-value=\"0.54"));
  EXPECT_TRUE(
      absl::StrContains(html, "data-field=\"rope\" data-scope=\"second\" data-value=\"1.3"));
  EXPECT_TRUE(absl::StrContains(html, "SHAPE_MISMATCH"));
}

TEST(CompareImplTest, JunitHasOneTestcasePerCase) {
  MockSession m;
  std::ostringstream out;
  RunWithReply(m, Args(VerdictFormat::kJunit), out);
  const std::string xml = out.str();
  EXPECT_TRUE(absl::StrContains(xml, "name=\"rms/p0\"")) << xml;
  EXPECT_TRUE(absl::StrContains(xml, "<failure type=\"REGRESSED\"")) << xml;
  EXPECT_TRUE(absl::StrContains(xml, "type=\"NOT_COMPARABLE\"")) << xml;
  EXPECT_TRUE(absl::StrContains(xml, "adam_ascendc")) << xml;
}

TEST(CompareImplTest, BadPairAndMissingPairMapAreRefusedBeforeAnyCall) {
  MockSession m;
  CompareImplArgs a = Args();
  a.pairs = {"rms"};
  std::ostringstream out, err;
  EXPECT_EQ(RunCompareImpl(m.session(), a, out, err), kExitUsage);
  EXPECT_TRUE(absl::StrContains(err.str(), "--pair 'rms': want CAND_OP=BASE_OP")) << err.str();
  a = Args();
  a.pair_map = "/nonexistent/pairs.txt";
  EXPECT_EQ(RunCompareImpl(m.session(), a, out, err), kExitNotFound);
}

TEST(CompareImplTest, ThePairMapIsSentAsItIs) {
  const auto dir = std::filesystem::temp_directory_path() / "npuperf_impl_test";
  std::filesystem::create_directories(dir);
  const std::string map = "# PyPTO=Ascend C\nrms=rms_ascendc\n";
  std::ofstream(dir / "pairs.txt") << map;
  MockSession m;
  v1::CompareImplementationsRequest sent;
  EXPECT_CALL(m.queries(), CompareImplementations(_, _, _))
      .WillOnce([&sent](grpc::ClientContext*, const v1::CompareImplementationsRequest& req,
                        v1::CompareImplementationsResponse* resp) {
        sent = req;
        *resp = ImplReply();
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "pair_map: 10000 pairs in all");
      });
  CompareImplArgs a = Args();
  a.pairs.clear();
  a.pair_map = (dir / "pairs.txt").string();
  std::ostringstream out, err;
  EXPECT_EQ(RunCompareImpl(m.session(), a, out, err), kExitError);
  EXPECT_EQ(sent.pair_map(), map);
  EXPECT_TRUE(absl::StrContains(err.str(), "pair_map: 10000 pairs")) << err.str();
  std::filesystem::remove_all(dir);
}

// ---- release-report -------------------------------------------------------

v1::Collection ReleaseCollection() {
  return Proto<v1::Collection>(R"pb(
    id: "c-pto"
    state: COLLECTION_STATE_FAILED
    counts { total: 5 }
    jobs { id: 1 operator_name: "rms" case_id: "p0" state: JOB_STATE_SUCCEEDED round_id: 11 }
    jobs { id: 2 operator_name: "rms" case_id: "p1" state: JOB_STATE_SUCCEEDED round_id: 12 }
    jobs { id: 3 operator_name: "rope" case_id: "p0" state: JOB_STATE_SUCCEEDED round_id: 13 }
    jobs { id: 4 operator_name: "adam" case_id: "p0" state: JOB_STATE_FAILED reason: "exit 3" }
    jobs { id: 5 operator_name: "mla" case_id: "p0" state: JOB_STATE_SUCCEEDED round_id: 15 })pb");
}

std::vector<v1::Round> ReleaseRounds() {
  return {
      Proto<v1::Round>("id: 11"), Proto<v1::Round>("id: 12"),
      Proto<v1::Round>(R"pb(id: 13
                            evidence { errors { code: "MISSING_GROUP" message: "Memory" } })pb"),
      Proto<v1::Round>("id: 15")};
}

TEST(ReleaseReportTest, GroupsAndPassRates) {
  const auto groups = ParseGroups("# op=group\nrms=qwen3\nrope = qwen3\nadam=deepseek\n");
  ASSERT_TRUE(groups.ok()) << groups.status();
  const v1::ReleaseReport r = BuildReleaseReport({ReleaseCollection()}, ReleaseRounds(), *groups);
  ASSERT_EQ(r.groups_size(), 3);
  EXPECT_EQ(r.groups(0).group(), "qwen3");
  EXPECT_EQ(r.groups(0).operators(), 2);
  EXPECT_EQ(r.groups(0).passed(), 1);  // rope's evidence has errors
  EXPECT_DOUBLE_EQ(r.groups(0).pass_rate(), 0.5);
  EXPECT_EQ(r.groups(1).group(), "deepseek");
  EXPECT_EQ(r.groups(1).passed(), 0);  // adam's job failed
  EXPECT_EQ(r.groups(2).group(), kUngrouped);
  EXPECT_EQ(r.groups(2).operators(), 1);
  EXPECT_EQ(r.total().operators(), 4);
  EXPECT_EQ(r.total().passed(), 2);
  ASSERT_EQ(r.operators_size(), 4);
  EXPECT_EQ(r.operators(0).operator_name(), "rms");
  EXPECT_EQ(r.operators(0).jobs(), 2);
  EXPECT_EQ(r.operators(1).failures(0), "case p0: evidence errors: MISSING_GROUP: Memory");
  EXPECT_EQ(r.operators(2).failures(0), "case p0: job 4 failed: exit 3");
}

TEST(ReleaseReportTest, ABadGroupsFileNamesTheLine) {
  EXPECT_TRUE(absl::StrContains(ParseGroups("a=b\nno group\n").status().message(), "line 2"));
  EXPECT_TRUE(absl::StrContains(ParseGroups("a=b\na=c\n").status().message(),
                                "line 2: operator a is given twice"));
  EXPECT_TRUE(absl::StrContains(ParseGroups("=b\n").status().message(), "line 1"));
}

TEST(ReleaseReportTest, WithABaselineItAddsTheImplementationTable) {
  MockSession m;
  v1::GetCollectionResponse page;
  *page.mutable_collection() = ReleaseCollection();
  EXPECT_CALL(m.collections(), GetCollection(_, _, _)).WillOnce(Reply(page));
  v1::ListRoundsResponse rounds;
  for (const auto& r : ReleaseRounds()) *rounds.add_rounds() = r;
  EXPECT_CALL(m.queries(), ListRounds(_, _, _)).WillOnce(Reply(rounds));
  EXPECT_CALL(m.queries(), CompareImplementations(_, _, _)).WillOnce(Reply(ImplReply()));
  ReleaseReportArgs a;
  a.collections = {"c-pto"};
  a.baseline = "c-asc";
  a.pairs = {"rms=rms_ascendc"};
  a.format = ReleaseFormat::kMarkdown;
  std::ostringstream out, err;
  ASSERT_EQ(RunReleaseReport(m.session(), a, out, err), kExitOk) << err.str();
  const std::string md = out.str();
  EXPECT_TRUE(absl::StrContains(md, "| model group | operators | pass rate |")) << md;
  EXPECT_TRUE(absl::StrContains(md, "| ungrouped | 4 | 50% |")) << md;
  EXPECT_TRUE(absl::StrContains(md, "| total | 4 | 50% |")) << md;
  EXPECT_TRUE(absl::StrContains(md, "- adam (ungrouped): case p0: job 4 failed: exit 3")) << md;
  EXPECT_TRUE(absl::StrContains(md, "| rms | rms_ascendc | 1 | 0.54 | 0.46 |")) << md;
}

TEST(ReleaseReportTest, HtmlAndJson) {
  for (ReleaseFormat f : {ReleaseFormat::kHtml, ReleaseFormat::kJson}) {
    MockSession m;
    v1::GetCollectionResponse page;
    *page.mutable_collection() = ReleaseCollection();
    EXPECT_CALL(m.collections(), GetCollection(_, _, _)).WillOnce(Reply(page));
    v1::ListRoundsResponse rounds;
    for (const auto& r : ReleaseRounds()) *rounds.add_rounds() = r;
    EXPECT_CALL(m.queries(), ListRounds(_, _, _)).WillOnce(Reply(rounds));
    EXPECT_CALL(m.queries(), CompareImplementations(_, _, _)).WillOnce(Reply(ImplReply()));
    ReleaseReportArgs a;
    a.collections = {"c-pto"};
    a.baseline = "c-asc";
    a.format = f;
    std::ostringstream out, err;
    ASSERT_EQ(RunReleaseReport(m.session(), a, out, err), kExitOk) << err.str();
    if (f == ReleaseFormat::kHtml) {
      EXPECT_TRUE(absl::StrContains(out.str(), "data-page=\"release\""));
      EXPECT_TRUE(absl::StrContains(out.str(), "data-chart=\"implementation-ratios\""));
    } else {
      const auto j = nlohmann::json::parse(out.str());
      EXPECT_EQ(j["schema"], "npuperf.release_report.v1");
      EXPECT_EQ(j["result"]["total"]["operators"], 4);
      EXPECT_EQ(j["result"]["implementations"][0]["pairs"].size(), 2u);
    }
  }
}

TEST(ReleaseReportTest, PairsWithoutABaselineAreAUsageError) {
  MockSession m;
  ReleaseReportArgs a;
  a.collections = {"c-pto"};
  a.pairs = {"rms=rms_ascendc"};
  std::ostringstream out, err;
  EXPECT_EQ(RunReleaseReport(m.session(), a, out, err), kExitUsage);
  a.pairs.clear();
  a.groups = "/nonexistent/groups.txt";
  EXPECT_EQ(RunReleaseReport(m.session(), a, out, err), kExitNotFound);
}

}  // namespace
}  // namespace npuperf::client
