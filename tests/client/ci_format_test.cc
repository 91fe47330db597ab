// client/ci_format.cc: the JUnit XML and the Markdown PR comment of
// compare and regressions, and the --format / --fail-on plumbing of
// client/compare_commands.cc (against StrictMock stubs). The JUnit file is
// also validated against tests/client/junit.xsd on real verdicts by
// tests/python/test_ci.py.
#include "client/ci_format.h"

#include <regex>
#include <sstream>

#include "client/compare_commands.h"
#include "client/format.h"
#include "common/status_util.h"
#include "nlohmann/json.hpp"
#include "tests/client/mock_session.h"

namespace npuperf::client {
namespace {

using ::npuperf::testing::FakeClock;
using ::npuperf::testing::JsonConfig;
using ::npuperf::testing::MockSession;
using ::npuperf::testing::Proto;
using ::npuperf::testing::Reply;
using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Return;

v1::RoundComparison Case(const std::string& op, const std::string& case_id, v1::Verdict verdict,
                         const std::string& rule, double base_us, double cand_us) {
  v1::RoundComparison c;
  c.set_operator_name(op);
  c.set_case_id(case_id);
  c.set_verdict(verdict);
  c.set_rule(rule);
  c.set_baseline_round_id(41);
  c.set_candidate_round_id(42);
  c.mutable_duration()->set_baseline_us(base_us);
  c.mutable_duration()->set_candidate_us(cand_us);
  if (base_us > 0) c.mutable_duration()->set_ratio(cand_us / base_us);
  return c;
}

// One case of every verdict, an unmatched one, and a rule that needs escaping.
VerdictReport Mixed() {
  VerdictReport r;
  r.title = "npuperf compare c-1 c-2";
  r.comparisons = {
      Case("add", "p1", v1::VERDICT_REGRESSED, "duration: slower by 8.0% <p & \"alpha\">", 12.5,
           13.5),
      Case("add", "p2", v1::VERDICT_STABLE, "duration: within 2%", 20, 20),
      Case("mul", "", v1::VERDICT_IMPROVED, "duration: faster by 40%", 10, 6),
      Case("rope", "a", v1::VERDICT_INSUFFICIENT, "samples: 2 < 5", 10, 10),
      Case("rope", "b", v1::VERDICT_NOT_COMPARABLE, "fingerprint: soc differs", 10, 11),
      Case("moe", "x", v1::VERDICT_ERRORED, "candidate round failed", 0, 0)};
  auto* fp = r.comparisons[4].add_fingerprint_differences();
  fp->set_field("soc");
  fp->set_baseline("Ascend910B2");
  fp->set_candidate("Ascend950PR");
  fp->set_blocking(true);
  r.unmatched = {"gone/p9"};
  r.counts = Proto<v1::ComparisonCounts>(
      "matched: 6 comparable: 3 regressed: 1 improved: 1 stable: 1 insufficient: 1 "
      "not_comparable: 1 errored: 1 unmatched: 1");
  r.summary = CountsSummary(r.counts);
  r.geomean_ratio = 0.912;
  r.exit_code = kExitRegressed;
  return r;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The <testcase ...>...</testcase> element named `name`.
std::string TestcaseNamed(const std::string& xml, const std::string& name) {
  const size_t at = xml.find("name=\"" + name + "\"");
  if (at == std::string::npos) return "";
  const size_t start = xml.rfind("<testcase", at);
  return xml.substr(start, xml.find("</testcase>", at) + 11 - start);
}

TEST(JunitXmlTest, OneTestcasePerCaseWithTheSuiteCounts) {
  FakeClock clock;
  const std::string xml = JunitXml(Mixed(), clock.SystemNow());
  EXPECT_THAT(xml,
              ::testing::StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                    "<testsuites name=\"npuperf\" tests=\"7\" failures=\"1\" "
                                    "errors=\"2\" time=\"0\">\n"
                                    "  <testsuite name=\"npuperf compare c-1 c-2\" tests=\"7\" "
                                    "failures=\"1\" errors=\"2\" skipped=\"2\" time=\"0\" "));
  EXPECT_TRUE(std::regex_search(xml, std::regex("timestamp=\"\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:"
                                                "\\d\\d\">\n    <properties>\n")))
      << xml;
  EXPECT_EQ(Count(xml, "<testcase "), 7);
  EXPECT_EQ(Count(xml, "</testcase>"), 7);
  EXPECT_THAT(xml, HasSubstr("<property name=\"exit_code\" value=\"3\"/>"));
  EXPECT_THAT(xml, HasSubstr("<property name=\"geomean_ratio\" value=\"0.912\"/>"));
  EXPECT_THAT(xml, ::testing::EndsWith("  </testsuite>\n</testsuites>\n"));
}

TEST(JunitXmlTest, RegressedIsAFailureWithTheNumbersAndTheRuleEscaped) {
  const std::string t = TestcaseNamed(JunitXml(Mixed(), {}), "add/p1");
  EXPECT_THAT(t, HasSubstr("classname=\"npuperf.add\""));
  EXPECT_THAT(t, HasSubstr("<failure type=\"REGRESSED\" message=\"duration: slower by 8.0% "
                           "&lt;p &amp; &quot;alpha&quot;&gt;\">"));
  EXPECT_THAT(t, HasSubstr("baseline 12.500 us -&gt; candidate 13.500 us, ratio 1.080"));
  EXPECT_THAT(t, HasSubstr("rounds 41 -&gt; 42"));
}

TEST(JunitXmlTest, NoVerdictsAreErrorsOrSkipsWithTheRule) {
  const std::string xml = JunitXml(Mixed(), {});
  EXPECT_THAT(TestcaseNamed(xml, "moe/x"),
              HasSubstr("<error type=\"ERRORED\" message=\"candidate round failed\">"));
  const std::string nc = TestcaseNamed(xml, "rope/b");
  EXPECT_THAT(nc,
              HasSubstr("<error type=\"NOT_COMPARABLE\" message=\"fingerprint: soc differs\">"));
  EXPECT_THAT(nc, HasSubstr("fingerprint soc: Ascend910B2 -&gt; Ascend950PR (blocking)"));
  EXPECT_THAT(TestcaseNamed(xml, "rope/a"),
              HasSubstr("<skipped message=\"INSUFFICIENT: samples: 2 &lt; 5\"/>"));
  EXPECT_THAT(TestcaseNamed(xml, "gone/p9"),
              HasSubstr("<skipped message=\"unmatched: present on one side only\"/>"));
}

TEST(JunitXmlTest, ImprovedAndStablePassWithTheirNumbersInSystemOut) {
  const std::string xml = JunitXml(Mixed(), {});
  for (const char* name : {"mul", "add/p2"}) {
    const std::string t = TestcaseNamed(xml, name);
    EXPECT_THAT(t, HasSubstr("<system-out>")) << name;
    EXPECT_THAT(t, Not(HasSubstr("<failure"))) << name;
    EXPECT_THAT(t, Not(HasSubstr("<error"))) << name;
    EXPECT_THAT(t, Not(HasSubstr("<skipped"))) << name;
  }
}

TEST(JunitXmlTest, RegressionsShowTheCountsWithoutRowsAsOneErrorTestcase) {
  VerdictReport r;
  r.title = "npuperf regressions --baseline branch=main";
  r.regressed_rows_only = true;
  r.counts = Proto<v1::ComparisonCounts>(
      "matched: 5 comparable: 3 stable: 2 improved: 1 insufficient: 1 errored: 1");
  const std::string xml = JunitXml(r, {});
  EXPECT_THAT(xml, HasSubstr("tests=\"2\" failures=\"0\" errors=\"1\""));
  EXPECT_THAT(xml, HasSubstr("<error type=\"NO_VERDICT\" message=\"2 cases reached no verdict: 1 "
                             "insufficient, 0 not comparable, 1 errored\"/>"));
  EXPECT_THAT(TestcaseNamed(xml, "comparable cases"),
              HasSubstr("<system-out>1 improved, 2 stable</system-out>"));
}

TEST(XmlEscapeTest, EntitiesAndNoForbiddenControlCharacters) {
  EXPECT_EQ(XmlEscape("a<b>&\"c'\x01\x1f\td\n"), "a&lt;b&gt;&amp;&quot;c&apos;\td\n");
  EXPECT_EQ(XmlEscape("算子"), "算子");
}

TEST(MarkdownCommentTest, SummaryTableOfChangedCasesAndTheRestFolded) {
  const std::string md = MarkdownComment(Mixed());
  EXPECT_THAT(md, ::testing::StartsWith("<!-- npuperf-verdict -->\n"
                                        "### npuperf compare c-1 c-2: 1 regressed\n\n"
                                        "1 regressed, 1 improved, 1 stable / 3 comparable of 6 "
                                        "matched (1 insufficient, 1 not comparable, 1 errored, 1 "
                                        "unmatched). Geomean duration ratio **0.912** over 3 "
                                        "comparable cases (below 1 is faster). Exit code 3.\n"));
  const size_t details = md.find("<details><summary>1 stable, 1 unmatched</summary>");
  ASSERT_NE(details, std::string::npos) << md;
  // Changed and no-verdict rows before the fold, worst first; stable after it.
  const size_t regressed = md.find("| add/p1 | **REGRESSED** |");
  const size_t errored = md.find("| moe/x | **ERRORED** |");
  const size_t improved = md.find("| mul | **IMPROVED** |");
  const size_t stable = md.find("| add/p2 | STABLE |");
  EXPECT_LT(regressed, errored);
  EXPECT_LT(errored, improved);
  EXPECT_LT(improved, details);
  EXPECT_GT(stable, details);
  EXPECT_NE(stable, std::string::npos);
  EXPECT_THAT(md, HasSubstr("Present on one side only: `gone/p9`"));
  EXPECT_THAT(md, HasSubstr("slower by 8.0% &lt;p &amp; \"alpha\">"));  // no HTML from the rule
  EXPECT_THAT(md, ::testing::EndsWith("</details>\n"));
}

// regressions against a baseline: a regression triaged before is not a new
// failure, as the exit code says.
VerdictReport Triaged() {
  VerdictReport r;
  r.title = "npuperf regressions --baseline branch=main";
  r.comparisons = {Case("add", "p1", v1::VERDICT_REGRESSED, "duration: slower by 8.0%", 12.5, 13.5),
                   Case("mul", "p2", v1::VERDICT_REGRESSED, "duration: slower by 5.0%", 10, 10.5)};
  r.triaged = {"ACKNOWLEDGED (regression 12)", ""};
  r.regressed_rows_only = true;
  r.counts = Proto<v1::ComparisonCounts>("matched: 2 comparable: 2 regressed: 2");
  r.summary = "2 regressed / 2 comparable";
  r.exit_code = kExitRegressed;
  return r;
}

TEST(JunitXmlTest, ATriagedRegressionIsSkippedANewOneFails) {
  const std::string xml = JunitXml(Triaged(), {});
  EXPECT_THAT(TestcaseNamed(xml, "add/p1"),
              HasSubstr("<skipped message=\"REGRESSED, ACKNOWLEDGED (regression 12): duration: "
                        "slower by 8.0%\"/>"));
  EXPECT_THAT(TestcaseNamed(xml, "mul/p2"), HasSubstr("<failure type=\"REGRESSED\""));
  EXPECT_THAT(xml, HasSubstr("failures=\"1\""));
}

TEST(MarkdownCommentTest, ATriagedRegressionIsListedApartAndNotCountedInTheHeadline) {
  const std::string md = MarkdownComment(Triaged());
  EXPECT_THAT(md, HasSubstr(": 1 regressed\n"));
  EXPECT_THAT(md, HasSubstr("Triaged before (not new): `add/p1`: ACKNOWLEDGED (regression 12).\n"));
  VerdictReport only = Triaged();
  only.comparisons.pop_back();
  only.triaged.pop_back();
  only.counts.set_regressed(1);
  const std::string quiet = MarkdownComment(only);
  EXPECT_THAT(quiet, HasSubstr(": no new regression (1 triaged before)\n"));
  EXPECT_THAT(quiet, HasSubstr("No new regression.\n"));
}

TEST(MarkdownCommentTest, PipesAreEscapedAndNothingChangedSaysSo) {
  VerdictReport r;
  r.title = "t";
  r.comparisons = {Case("a|b", "", v1::VERDICT_STABLE, "x|y", 1, 1)};
  r.counts = Proto<v1::ComparisonCounts>("matched: 1 comparable: 1 stable: 1");
  r.summary = CountsSummary(r.counts);
  const std::string md = MarkdownComment(r);
  EXPECT_THAT(md, HasSubstr("### t: nothing regressed\n"));
  EXPECT_THAT(md, HasSubstr("No case changed.\n"));
  EXPECT_THAT(md, HasSubstr("| a\\|b | STABLE |"));
  EXPECT_THAT(md, HasSubstr("x\\|y"));
}

TEST(MarkdownCommentTest, StaysUnderTheCommentLimit) {
  VerdictReport r;
  r.title = "big";
  for (int i = 0; i < 2000; ++i) {
    r.comparisons.push_back(Case("op", "case" + std::to_string(i), v1::VERDICT_REGRESSED,
                                 std::string(40, 'r'), 10, 12));
  }
  r.counts.set_regressed(2000);
  const std::string md = MarkdownComment(r);
  EXPECT_LT(md.size(), 65'536u);
  EXPECT_TRUE(std::regex_search(md, std::regex("\n… \\d+ more rows: see `--format json`\n"))) << md;
}

// ---- the commands ---------------------------------------------------------

v1::CompareCollectionsResponse Reply2(const VerdictReport& r) {
  v1::CompareCollectionsResponse resp;
  for (const auto& c : r.comparisons) *resp.add_comparisons() = c;
  *resp.mutable_counts() = r.counts;
  return resp;
}

TEST(VerdictFormatTest, CompareWritesJunitOrMarkdownAndFailOnChoosesTheExitCode) {
  MockSession m;
  EXPECT_CALL(m.queries(), CompareCollections(_, _, _))
      .Times(4)
      .WillRepeatedly(Reply(Reply2(Mixed())));
  VerdictArgs junit;
  junit.format = VerdictFormat::kJunit;
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(m.session(), "c-1", "c-2", junit, out, err), kExitRegressed);
  EXPECT_THAT(out.str(), HasSubstr("<testsuite name=\"npuperf compare c-1 c-2\" tests=\"6\""));
  EXPECT_THAT(out.str(), HasSubstr("<property name=\"exit_code\" value=\"3\"/>"));
  VerdictArgs md;
  md.format = VerdictFormat::kMarkdown;
  md.fail_on = FailOn::kNever;
  out.str("");
  EXPECT_EQ(RunCompare(m.session(), "c-1", "c-2", md, out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("Exit code 0.\n"));
  VerdictArgs regressed;
  regressed.fail_on = FailOn::kRegressed;
  EXPECT_EQ(RunCompare(m.session(), "c-1", "c-2", regressed, out, err), kExitRegressed);
  VerdictArgs json;
  json.format = VerdictFormat::kJson;  // --format json after the command, text globally
  out.str("");
  EXPECT_EQ(RunCompare(m.session(), "c-1", "c-2", json, out, err), kExitRegressed);
  EXPECT_EQ(nlohmann::json::parse(out.str())["exit_code"], kExitRegressed);
}

TEST(VerdictFormatTest, FailOnUnderEveryOutcome) {
  const auto no_verdict = Proto<v1::ComparisonCounts>(
      "matched: 2 comparable: 1 stable: 1 "
      "insufficient: 1");
  const auto regressed = Proto<v1::ComparisonCounts>("matched: 1 comparable: 1 regressed: 1");
  const auto clean = Proto<v1::ComparisonCounts>("matched: 1 comparable: 1 stable: 1");
  EXPECT_EQ(ExitCodeOf(no_verdict, FailOn::kNoVerdict), kExitNoVerdict);
  EXPECT_EQ(ExitCodeOf(no_verdict, FailOn::kRegressed), kExitOk);
  EXPECT_EQ(ExitCodeOf(regressed, FailOn::kRegressed), kExitRegressed);
  EXPECT_EQ(ExitCodeOf(regressed, FailOn::kNever), kExitOk);
  EXPECT_EQ(ExitCodeOf(clean, FailOn::kNoVerdict), kExitOk);
  EXPECT_EQ(ExitCodeOf(v1::ComparisonCounts(), FailOn::kNoVerdict), kExitNoVerdict);
}

TEST(ErrorJsonTest, JsonErrorsAreAnObjectWithCodeMessageAndViolations) {
  MockSession m(JsonConfig());
  EXPECT_CALL(m.queries(), CompareCollections(_, _, _))
      .WillOnce(Return(
          ToGrpcStatus(InvalidArgumentWithFields({{"options.alpha", "must be in (0, 0.5]"}}))));
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(m.session(), "c-1", "c-2", {}, out, err), kExitError);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "npuperf.error.v1");
  EXPECT_EQ(j["exit_code"], kExitError);
  EXPECT_EQ(j["error"]["code"], "INVALID_ARGUMENT");
  EXPECT_EQ(j["error"]["code_number"], 3);
  EXPECT_EQ(j["error"]["field_violations"][0]["field"], "options.alpha");
  EXPECT_EQ(j["error"]["field_violations"][0]["description"], "must be in (0, 0.5]");
  EXPECT_THAT(err.str(), HasSubstr("npuperf: INVALID_ARGUMENT: "));  // stderr still says it
}

TEST(ErrorJsonTest, UnavailableDeadlineAndNotFoundHaveTheirExitCodes) {
  MockSession m(JsonConfig());
  EXPECT_CALL(m.queries(), CompareRounds(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection refused")))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "deadline")))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::NOT_FOUND, "round 42 not found")));
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(m.session(), "41", "42", {}, out, err), kExitUnavailable);
  EXPECT_EQ(RunCompare(m.session(), "41", "42", {}, out, err), kExitUnavailable);
  out.str("");
  EXPECT_EQ(RunCompare(m.session(), "41", "42", {}, out, err), kExitNotFound);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["error"]["code"], "NOT_FOUND");
  EXPECT_EQ(j["exit_code"], kExitNotFound);
  EXPECT_TRUE(j["error"]["field_violations"].empty());
}

TEST(ErrorJsonTest, UsageErrorsInJsonToo) {
  MockSession m(JsonConfig());  // no call
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(m.session(), "41", "c-2", {}, out, err), kExitUsage);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["exit_code"], kExitUsage);
  EXPECT_EQ(j["error"]["message"], "give two round ids or two collection ids");
}

TEST(ErrorJsonTest, ExitCodeOfError) {
  EXPECT_EQ(ExitCodeOfError(absl::UnavailableError("x")), kExitUnavailable);
  EXPECT_EQ(ExitCodeOfError(absl::DeadlineExceededError("x")), kExitUnavailable);
  EXPECT_EQ(ExitCodeOfError(absl::NotFoundError("x")), kExitNotFound);
  EXPECT_EQ(ExitCodeOfError(absl::PermissionDeniedError("x")), kExitError);
  EXPECT_EQ(ErrorJson(absl::InternalError("bad \xff byte"), 1).find("\xff"), std::string::npos);
}

}  // namespace
}  // namespace npuperf::client
