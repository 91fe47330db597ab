// The report pages in a real browser: headless Chromium (Debian's
// `chromium`) loads each page rendered from the stored capture (fixtures.h),
// once per page: --dump-dom gives the DOM it built (the charts, the rule
// lines, the marked cores, the verdict colours must be in it, and no
// script), --screenshot a PNG that must hold more than a few colours and
// the fills of the marked elements. Without chromium the test fails under CI
// (CI set) and skips elsewhere. NPUPERF_REPORT_SCREENSHOTS=DIR keeps the
// screenshots (docs/img/ comes from there).
#include "tests/report/browser.h"

#include "gtest/gtest.h"
#include "report/report.h"
#include "tests/fakes/temp_dir.h"
#include "tests/report/fixtures.h"

namespace npuperf::report {
namespace {

using testing::ExpectDom;
using testing::ExpectPicture;
using testing::Load;
using testing::Loaded;

TEST(BrowserTest, RoundPage) {
  REQUIRE_CHROMIUM();
  npuperf::testing::TempDir dir;
  const Loaded l =
      Load(dir.path(), "round", RenderRoundPage(testing::CaptureRound(42, "c1", 87139.38)));
  ExpectDom(l,
            {"data-page=\"round\"", "data-chart=\"pipe-aiv\"", "data-rule=\"0.80\"",
             "data-rule=\"0.70\"", "data-chart=\"per-core\"", "class=\"core slowest\"",
             "class=\"core fastest\"", "data-chart=\"samples\"", "id=\"findings\""},
            "round");
  ExpectPicture(l, {0xd64545, 0x2f9e5b, 0xe0793a}, "round");  // slowest, fastest, bar over 80 %
}

TEST(BrowserTest, CollectionPage) {
  REQUIRE_CHROMIUM();
  npuperf::testing::TempDir dir;
  const Loaded l = Load(dir.path(), "collection",
                        RenderCollectionPage(testing::DemoCollection(), testing::DemoHistory()));
  ExpectDom(l,
            {"data-page=\"collection\"", "data-chart=\"sparkline\"", "class=\"spark-this\"",
             "state-failed"},
            "collection");
  ExpectPicture(l, {0xf8c4c4, 0x5b8def}, "collection");  // the failed row, the sparklines
}

TEST(BrowserTest, ComparisonPage) {
  REQUIRE_CHROMIUM();
  npuperf::testing::TempDir dir;
  const Loaded l = Load(dir.path(), "comparison", RenderComparisonPage(testing::DemoComparison()));
  ExpectDom(
      l,
      {"data-page=\"comparison\"", "class=\"verdict v-regressed\"", "class=\"verdict v-improved\"",
       "data-chart=\"forest\"", "class=\"ci\"", "id=\"finding-changes\""},
      "comparison");
  ExpectPicture(l, {0xf8c4c4, 0xd8f3dc, 0xffe8b3},
                "comparison");  // regressed, improved, insufficient
}

TEST(BrowserTest, HistoryPage) {
  REQUIRE_CHROMIUM();
  npuperf::testing::TempDir dir;
  const Loaded l = Load(dir.path(), "history", RenderHistoryPage(testing::DemoHistoryPage()));
  ExpectDom(l,
            {"data-page=\"history\"", "data-chart=\"series\"", "class=\"baseline\"",
             "class=\"mark pinned\"", "class=\"mark v-regressed\""},
            "history");
  ExpectPicture(l, {0xd64545, 0x2f9e5b}, "history");  // regressed markers, the baseline line
}

// A page whose every string is a script: the browser builds no script
// element from it and shows the text.
TEST(BrowserTest, HostileTextStaysText) {
  REQUIRE_CHROMIUM();
  npuperf::testing::TempDir dir;
  v1::Round r = testing::CaptureRound(7, "<script>document.title='pwned'</script>", 80);
  r.set_operator_name("\"><img src=x onerror=alert(1)>");
  (*r.mutable_labels())["<b>"] = "</style><script>1</script>&amp;";
  r.mutable_evidence()->add_warnings("<svg onload=alert(1)>");
  const Loaded l = Load(dir.path(), "hostile", RenderRoundPage(r));
  EXPECT_EQ(l.dom.find("<script"), std::string::npos);
  EXPECT_EQ(l.dom.find("<img"), std::string::npos);
  EXPECT_EQ(l.dom.find("<svg onload"), std::string::npos);
  EXPECT_NE(l.dom.find("&lt;script&gt;document.title="), std::string::npos)
      << l.dom.substr(0, 2000);
  EXPECT_EQ(l.dom.find("pwned</title>"), std::string::npos);
}

}  // namespace
}  // namespace npuperf::report
