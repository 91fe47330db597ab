// Issue 19 HTML reports end to end: two standard-mode demo rounds (real
// server, agent and msprof-sim) rendered by the real CLI as the round,
// collection, comparison and history pages, each loaded once in headless
// Chromium (tests/report/browser.h): the DOM holds the charts, the rule
// lines, the marked cores and the verdict colours, the round's screenshot is
// not blank (NPUPERF_REPORT_SCREENSHOTS=DIR keeps them: docs/img comes from
// there). Without chromium: fails under CI, skips elsewhere.
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "npuperf/v1/collection.pb.h"
#include "tests/integration/cluster.h"
#include "tests/report/browser.h"

namespace npuperf::testing {
namespace {

constexpr char kRmsNormKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

// Submits the demo operator once; its collection.
v1::Collection SubmitDemo(Cluster& c) {
  auto r = c.Cli({"--format", "json", "submit",
                  (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(), "--op-name",
                  kRmsNormKernel, "--warm-up", "0", "--repeats", "2", "--label", "branch=main"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << c.agent->Log();
  v1::Collection col;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) << r.out;
  EXPECT_EQ(col.jobs_size(), 1);
  if (col.jobs_size() == 1) {
    EXPECT_EQ(col.jobs(0).state(), v1::JOB_STATE_SUCCEEDED);
  }
  return col;
}

// The CLI's page for args, loaded in the browser.
report::testing::Loaded Page(Cluster& c, const std::string& name,
                             const std::vector<std::string>& args, int want_exit = 0) {
  auto r = c.Cli(args);
  EXPECT_EQ(r.exit_code, want_exit) << name << ": " << r.err;
  EXPECT_EQ(r.out.rfind("<!DOCTYPE html>", 0), 0u) << name << ": " << r.out.substr(0, 200);
  return report::testing::Load(c.dir.path(), name, r.out);
}

TEST(ReportEndToEndTest, TheCliWritesEveryPageFromDemoRoundsAndTheBrowserShowsThem) {
  REQUIRE_CHROMIUM();
  Cluster c;
  c.Start("0");
  const v1::Collection first = SubmitDemo(c), second = SubmitDemo(c);
  ASSERT_FALSE(HasFailure());
  const std::string round = std::to_string(second.jobs(0).round_id());

  const auto r = Page(c, "report-round", {"report", round, "--style", "html"});
  report::testing::ExpectDom(
      r,
      {"data-page=\"round\"", "data-chart=\"samples\"", "data-rule=\"0.80\"", "data-rule=\"0.70\"",
       "data-chart=\"per-core\"", "class=\"core slowest\"", "class=\"core fastest\"",
       "id=\"findings\"", kRmsNormKernel},
      "round");
  report::testing::ExpectPicture(r, {0xd64545, 0x2f9e5b}, "round");  // slowest, fastest cores

  const auto col = Page(c, "report-collection", {"report", second.id(), "--style", "html"});
  report::testing::ExpectDom(col, {"data-page=\"collection\"", "data-points=\"2\"", "spark-this"},
                             "collection");

  // Same operator, same simulated device: a verdict, whichever it is.
  auto cmp = c.Cli({"compare", first.id(), second.id(), "--format", "html"});
  const auto page = report::testing::Load(c.dir.path(), "report-compare", cmp.out);
  report::testing::ExpectDom(page,
                             {"data-page=\"comparison\"", "class=\"verdict v-",
                              "data-chart=\"forest\"", "id=\"finding-changes\""},
                             "comparison");

  const auto hist =
      Page(c, "report-history",
           {"history", "inplace_add_rmsnorm", "--baseline", first.id(), "--style", "html"});
  report::testing::ExpectDom(hist,
                             {"data-page=\"history\"", "data-chart=\"series\"",
                              "class=\"baseline\"", "class=\"mark pinned\"", "branch=main"},
                             "history");
}

}  // namespace
}  // namespace npuperf::testing
